#include "viewer/gl_program.hpp"

#include <fmt/format.h>

#include "nbody/error.hpp"

namespace nbody::viewer {

namespace {

std::string shader_log(GLuint shader) {
  GLint length = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<std::size_t>(length > 0 ? length : 1), '\0');
  glGetShaderInfoLog(shader, length, nullptr, log.data());
  return log;
}

GLuint compile(GLenum kind, const char* source) {
  const GLuint shader = glCreateShader(kind);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    const std::string log = shader_log(shader);
    glDeleteShader(shader);
    throw Error(fmt::format("nbody view: a {} shader did not compile: {}",
                            kind == GL_VERTEX_SHADER ? "vertex" : "fragment", log));
  }
  return shader;
}

}  // namespace

GlProgram::GlProgram(const char* vertex_source, const char* fragment_source) {
  const GLuint vertex = compile(GL_VERTEX_SHADER, vertex_source);
  GLuint fragment = 0;
  try {
    fragment = compile(GL_FRAGMENT_SHADER, fragment_source);
  } catch (...) {
    glDeleteShader(vertex);
    throw;
  }
  id_ = glCreateProgram();
  glAttachShader(id_, vertex);
  glAttachShader(id_, fragment);
  glLinkProgram(id_);
  glDeleteShader(vertex);  // the program keeps what it needs
  glDeleteShader(fragment);
  GLint ok = 0;
  glGetProgramiv(id_, GL_LINK_STATUS, &ok);
  if (!ok) {
    GLint length = 0;
    glGetProgramiv(id_, GL_INFO_LOG_LENGTH, &length);
    std::string log(static_cast<std::size_t>(length > 0 ? length : 1), '\0');
    glGetProgramInfoLog(id_, length, nullptr, log.data());
    glDeleteProgram(id_);
    throw Error(fmt::format("nbody view: the shaders did not link: {}", log));
  }
}

GlProgram::~GlProgram() {
  glDeleteProgram(id_);
}

}  // namespace nbody::viewer
