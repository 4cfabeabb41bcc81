#include "viewer/window.hpp"

#include <cstring>
#include <vector>

#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <fmt/format.h>

#include "nbody/error.hpp"

namespace nbody::viewer {

namespace {

// GLFW reports why something failed through a callback; the message goes into the
// nbody::Error the user sees (e.g. "X11: The DISPLAY environment variable is missing").
std::string& last_glfw_error() {
  static std::string message;
  return message;
}

void on_glfw_error(int code, const char* description) {
  last_glfw_error() = fmt::format("{} (GLFW error 0x{:x})", description ? description : "?", code);
}

Window* self(GLFWwindow* w) {
  return static_cast<Window*>(glfwGetWindowUserPointer(w));
}

}  // namespace

Window::Window(int width, int height, const std::string& title, bool vsync) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    throw Error(fmt::format(
        "nbody view: cannot open a window: {}. It needs a display: run it on a desktop, with "
        "ssh -X, or under xvfb-run; nbody render makes pictures without one",
        last_glfw_error()));
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);  // macOS offers 3.3 core only so
  window_ = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (!window_) {
    const std::string reason = last_glfw_error();
    glfwTerminate();
    throw Error(fmt::format("nbody view: cannot create an OpenGL 3.3 core window: {}", reason));
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(vsync ? 1 : 0);
  glfwSetWindowUserPointer(window_, this);
  // Ours first: ImGui's backend keeps them and calls them after its own handling.
  glfwSetMouseButtonCallback(window_, on_button);
  glfwSetScrollCallback(window_, on_scroll);
  glfwSetKeyCallback(window_, on_key);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini left in the working directory
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  imgui_ready_ = true;
}

Window::~Window() {
  if (imgui_ready_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  glfwDestroyWindow(window_);
  glfwTerminate();
}

void Window::on_button(GLFWwindow* w, int button, int action, int) {
  InputEvent e;
  e.kind = InputEvent::Kind::Button;
  e.button = button;
  e.action = action;
  glfwGetCursorPos(w, &e.x, &e.y);
  self(w)->pending_.push_back(e);
}

void Window::on_scroll(GLFWwindow* w, double, double dy) {
  InputEvent e;
  e.kind = InputEvent::Kind::Scroll;
  e.amount = dy;
  glfwGetCursorPos(w, &e.x, &e.y);
  self(w)->pending_.push_back(e);
}

void Window::on_key(GLFWwindow* w, int key, int, int action, int) {
  InputEvent e;
  e.kind = InputEvent::Kind::Key;
  e.key = key;
  e.action = action;
  glfwGetCursorPos(w, &e.x, &e.y);
  self(w)->pending_.push_back(e);
}

void Window::begin_frame() {
  glfwPollEvents();
  events_.swap(pending_);
  pending_.clear();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void Window::render_ui(bool draw) {
  ImGui::Render();
  if (draw) ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void Window::framebuffer_size(int& width, int& height) const {
  glfwGetFramebufferSize(window_, &width, &height);
}

void Window::pixel_scale(double& sx, double& sy) const {
  int fw = 0, fh = 0, ww = 0, wh = 0;
  glfwGetFramebufferSize(window_, &fw, &fh);
  glfwGetWindowSize(window_, &ww, &wh);
  sx = ww > 0 ? static_cast<double>(fw) / ww : 1.0;
  sy = wh > 0 ? static_cast<double>(fh) / wh : 1.0;
}

render::Image read_back_buffer(int width, int height) {
  render::Image image(width, height);
  std::vector<unsigned char> rows(image.rgb.size());
  glPixelStorei(GL_PACK_ALIGNMENT, 1);  // RGB rows are not 4-byte multiples
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, rows.data());
  // OpenGL's first row is the bottom one; images start at the top.
  const std::size_t row_bytes = static_cast<std::size_t>(width) * 3;
  for (int y = 0; y < height; ++y) {
    std::memcpy(image.pixel(0, y),
                rows.data() + static_cast<std::size_t>(height - 1 - y) * row_bytes, row_bytes);
  }
  return image;
}

}  // namespace nbody::viewer
