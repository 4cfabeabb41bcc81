#pragma once
// Draws the bodies and the debug lines with OpenGL 3.3 core shaders. Each body is one
// instance of a screen-aligned quad whose fragment shader cuts out a round point (fixed
// pixel size) or a disc sized by the body's radius, coloured through the shared colormap
// (a 256-texel texture), with depth so nearer bodies cover farther ones in 3D.
// Per frame the bodies cost one upload of 5 floats each (position relative to the camera
// centre, radius, colour value): 20 MB for a million bodies.
#include <cstddef>
#include <vector>

#include "nbody/particles.hpp"
#include "viewer/camera_control.hpp"
#include "viewer/gl.hpp"
#include "viewer/gl_program.hpp"

namespace nbody::viewer {

struct DrawParams {
  ViewMatrix view;
  int width = 1, height = 1;   // framebuffer pixels
  double units_per_pixel = 1;  // simulation units per pixel
  bool discs = false;          // sized by radius; else points of point_pixels
  float point_pixels = 4;
};

class SceneRenderer {
 public:
  SceneRenderer();  // needs a current OpenGL 3.3 core context
  ~SceneRenderer();
  SceneRenderer(const SceneRenderer&) = delete;
  SceneRenderer& operator=(const SceneRenderer&) = delete;

  /// The bodies to draw: positions relative to origin (the camera centre, so float keeps
  /// precision far from the coordinate origin) and colour values in [0, 1].
  void set_bodies(const ParticleSystem& ps, const std::vector<float>& values,
                  const double origin[3]);
  /// Bodies drawn as rings on top (a picked body and its neighbours).
  void set_highlights(const ParticleSystem& ps, const std::vector<std::size_t>& indices,
                      const double origin[3]);

  void clear(int width, int height) const;
  void draw_bodies(const DrawParams& p) const;
  void draw_highlights(const DrawParams& p, const float rgb[3]) const;
  /// Line segments (pairs of points relative to the origin), on top of everything.
  void draw_lines(const std::vector<float>& xyz, const DrawParams& p, const float rgba[4]);

 private:
  // One VAO per instance buffer, both sharing the corner quad.
  struct Batch {
    GLuint vao = 0, instances = 0;
    GLsizei count = 0;
  };
  void make_batch(Batch& b) const;
  void upload(Batch& b, const std::vector<float>& data);
  void set_common_uniforms(const GlProgram& program, const DrawParams& p) const;
  void draw_batch(const Batch& b, const DrawParams& p, bool ring, const float rgb[3]) const;

  GlProgram bodies_program_;
  GlProgram lines_program_;
  GLuint quad_ = 0;
  GLuint colormap_ = 0;
  Batch bodies_, highlights_;
  GLuint lines_vao_ = 0, lines_vbo_ = 0;
  float depth_scale_ = 1;  // |p - origin| of the farthest body: maps depth into [-1, 1]
  std::vector<float> scratch_;
};

}  // namespace nbody::viewer
