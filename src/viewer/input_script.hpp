#pragma once
// Scripted inputs for `nbody view --script FILE`, so tests and demos can spawn bodies, pick
// and zoom without a mouse. One action per line, applied at the start of the given frame
// (frames count from 1), before that frame's steps; `#` starts a comment:
//
//   frame 2 click 400 300      left click at window pixel (400, 300): one body there
//   frame 3 disc 200 200       the R key with the cursor at (200, 200): a disc of bodies
//   frame 3 disc 200 200 50    the same with 50 bodies (else the Spawn panel's count)
//   frame 4 pick 400 300       pick the body nearest to (400, 300) (Debug panel)
//   frame 5 scroll 400 300 2   two scroll notches towards the viewer (zoom in) at (400, 300)
//   frame 6 pause | resume | step | reset
#include <cstdint>
#include <string>
#include <vector>

namespace nbody::viewer {

struct ScriptAction {
  enum class Kind { Click, Disc, Pick, Scroll, Pause, Resume, Step, ResetCamera };
  std::uint64_t frame = 0;
  Kind kind = Kind::Click;
  double x = 0, y = 0;  // window pixels (x right, y down)
  double amount = 0;    // scroll notches; disc: bodies (0: the Spawn panel's count)
};

/// Parses the file; throws nbody::Error "FILE:LINE: problem" for anything it does not know.
/// The actions come back sorted by frame (stable: same-frame actions keep their order).
[[nodiscard]] std::vector<ScriptAction> read_input_script(const std::string& path);

}  // namespace nbody::viewer
