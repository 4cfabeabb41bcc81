// `nbody view` in builds without GLFW, Dear ImGui or OpenGL: a message saying how to get it.
#include "nbody/error.hpp"
#include "viewer/viewer.hpp"

namespace nbody::viewer {

bool viewer_available() {
  return false;
}

ViewerResult run_viewer(ParticleSystem, const ViewerOptions&) {
  throw Error(
      "nbody view: this nbody was built without the viewer (it needs GLFW 3.3, OpenGL and "
      "Dear ImGui). On Debian: sudo apt-get install libglfw3-dev libimgui-dev libgl-dev, then "
      "reconfigure and rebuild (cmake --preset release && cmake --build --preset release). "
      "Pictures without a window: nbody render");
}

}  // namespace nbody::viewer
