#pragma once
// The viewer's window: GLFW with an OpenGL 3.3 core context and Dear ImGui on top. Mouse
// buttons, scrolling and keys are queued as events (GLFW callbacks; ImGui's backend chains
// them), so a click shorter than a frame is never lost.
#include <string>
#include <vector>

#include "render/image.hpp"
#include "viewer/gl.hpp"

namespace nbody::viewer {

struct InputEvent {
  enum class Kind { Button, Scroll, Key };
  Kind kind = Kind::Button;
  int button = 0;       // GLFW_MOUSE_BUTTON_*
  int key = 0;          // GLFW_KEY_*
  int action = 0;       // GLFW_PRESS, GLFW_RELEASE, GLFW_REPEAT
  double x = 0, y = 0;  // cursor, window coordinates
  double amount = 0;    // scroll notches (positive: away from the user)
};

class Window {
 public:
  /// Throws nbody::Error with GLFW's reason when there is no display or no OpenGL 3.3.
  Window(int width, int height, const std::string& title, bool vsync);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  [[nodiscard]] GLFWwindow* handle() const { return window_; }
  [[nodiscard]] bool should_close() const { return glfwWindowShouldClose(window_) != 0; }
  void close() { glfwSetWindowShouldClose(window_, GLFW_TRUE); }
  /// Polls GLFW and starts an ImGui frame; events since the last call are in events().
  void begin_frame();
  /// Ends the ImGui frame and draws it (draw false: panels hidden, only ends the frame).
  void render_ui(bool draw);
  void swap() { glfwSwapBuffers(window_); }
  [[nodiscard]] const std::vector<InputEvent>& events() const { return events_; }

  void framebuffer_size(int& width, int& height) const;
  /// Framebuffer pixels per window coordinate (2 on a HiDPI screen, 1 under X11/Xvfb).
  void pixel_scale(double& sx, double& sy) const;
  void cursor(double& x, double& y) const { glfwGetCursorPos(window_, &x, &y); }
  [[nodiscard]] bool key_down(int key) const { return glfwGetKey(window_, key) == GLFW_PRESS; }

 private:
  static void on_button(GLFWwindow* w, int button, int action, int mods);
  static void on_scroll(GLFWwindow* w, double dx, double dy);
  static void on_key(GLFWwindow* w, int key, int scancode, int action, int mods);

  GLFWwindow* window_ = nullptr;
  std::vector<InputEvent> events_;   // delivered to the frame
  std::vector<InputEvent> pending_;  // filled by the callbacks
  bool imgui_ready_ = false;
};

/// The back buffer of the current context as an image (top row first), for --screenshot.
[[nodiscard]] render::Image read_back_buffer(int width, int height);

}  // namespace nbody::viewer
