#pragma once
// OpenGL 3.3 core entry points. On Linux, libGL (glvnd) exports every core function and
// dispatches to the current context, so the prototypes are enough and no loader library
// is needed; GLFW is told not to include GL headers of its own.
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
