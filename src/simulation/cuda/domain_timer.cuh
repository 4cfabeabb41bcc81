#pragma once
// Where a decomposed GPU tree evaluation's force time goes (domain_forces.cuh), by CUDA events
// on the force stream and on the exchange's stream. On the force stream, one after the other
// (they add up to the force stage): this rank's bodies described (their kernels, with the
// span of its keys), the shared top tree (what the stream waited for the host's collectives
// after the pieces' kernels, and the moments' write), the walk of the local tree, the wait
// for the received trees after it, the walks of the received trees.
// Beside the local walk, on the exchange's stream and the host: the descriptions taken to the
// host and all-gathered (the wait for the slowest rank included), the essential trees
// counted, their sizes exchanged (host), the trees written and sent. What of that the step
// did not wait for is what the walk hid
// (docs/distributed.md).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/event_marks.cuh"

namespace nbody::cuda_resident {

class DomainTimer {
 public:
  enum Mark {
    Begin,
    Described,
    Gathered,
    Counted,
    Written,    // this rank's essential trees, written before the sizes' exchange
    Announced,  // after that exchange on the host (it waits for the slower rank)
    Walked,
    Received,
    Done,
    ExchangeBegin,
    ExchangeEnd,
    Top,  // after the shared top tree (TreeForces::share_top_cells), which follows Described
    kMarks
  };

  void mark(Mark m, cudaStream_t stream) {
    marks_.mark(m, stream);
    if (m == Begin) recorded_ = true;
  }
  /// The event of a mark, for the host to wait on (TreeForces::describe_bodies).
  [[nodiscard]] cudaEvent_t event(Mark m) const { return marks_.event(m); }
  /// After the streams' synchronisation: milliseconds from one mark to another.
  [[nodiscard]] double ms(Mark from, Mark to) const { return marks_.ms(from, to); }
  [[nodiscard]] bool recorded() const { return recorded_; }

  /// The force stage in parts (they add up to it), milliseconds.
  [[nodiscard]] std::vector<std::pair<std::string, double>> stages() const {
    if (!recorded_) return {};
    return {{"describe", ms(Begin, Described)},
            {"top", ms(Described, Top)},
            {"walk", ms(Top, Walked)},
            {"wait", ms(Walked, Received)},
            {"foreign", ms(Received, Done)}};
  }
  /// The work beside the local walk in parts (gather, count, write, announce, send), ms;
  /// announce: what of the sizes' exchange on the host the write did not hide.
  [[nodiscard]] std::vector<std::pair<std::string, double>> beside() const {
    if (!recorded_) return {};
    return {{"gather", ms(Top, Gathered)},
            {"count", ms(Gathered, Counted)},
            {"write", ms(Counted, Written)},
            {"announce", ms(Written, Announced)},
            {"send", ms(ExchangeBegin, ExchangeEnd)}};
  }
  /// The milliseconds this rank waited for the received trees after its local walk: the
  /// others' time, or work beside the walk it did not hide. Not its work: a cut that counted
  /// such waits as work moved bodies to the slower rank (measured on 2 H200s at 64M: 37.7M
  /// against 29.5M bodies, the faster rank waiting 10-14 ms a step).
  /// The shared top tree's step counts as waiting too: its two host collectives wait for the
  /// slowest rank, and its kernels take a fraction of a millisecond.
  [[nodiscard]] double wait_ms() const {
    return recorded_ ? ms(Walked, Received) + ms(Described, Top) : 0.0;
  }
  /// The milliseconds of the work beside the walk (from the pieces described to the trees
  /// received), and those of them the local walk hid.
  [[nodiscard]] std::pair<double, double> exchange_and_hidden() const {
    if (!recorded_) return {0, 0};
    const double span = ms(Top, ExchangeEnd);
    return {span, std::max(0.0, span - ms(Walked, Received))};
  }

 private:
  gpu::EventMarks<kMarks> marks_;
  bool recorded_ = false;
};

}  // namespace nbody::cuda_resident
