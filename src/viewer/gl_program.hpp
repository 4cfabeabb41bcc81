#pragma once
// A linked GLSL program, compiled from vertex and fragment source; owns its GL object.
#include <string>

#include "viewer/gl.hpp"

namespace nbody::viewer {

class GlProgram {
 public:
  /// Throws nbody::Error with the compiler's log when a shader does not compile or link.
  GlProgram(const char* vertex_source, const char* fragment_source);
  ~GlProgram();
  GlProgram(const GlProgram&) = delete;
  GlProgram& operator=(const GlProgram&) = delete;

  void use() const { glUseProgram(id_); }
  [[nodiscard]] GLint uniform(const char* name) const { return glGetUniformLocation(id_, name); }

 private:
  GLuint id_ = 0;
};

}  // namespace nbody::viewer
