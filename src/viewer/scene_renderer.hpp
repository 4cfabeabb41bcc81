#pragma once
// Draws the bodies and the debug lines with OpenGL 3.3 core shaders. Each body is one
// instance of a screen-aligned quad whose fragment shader cuts out a round point (fixed
// pixel size) or a disc sized by the body's radius, coloured through the shared colormap
// (a 256-texel texture), with depth so nearer bodies cover farther ones in 3D.
// Per frame the bodies cost one upload of 3 floats each (the position relative to the camera
// centre): 12 MB for a million bodies; their radii and colour values (2 floats each) are
// uploaded only when they change.
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

  /// The bodies to draw, every frame: x y z per body, drawn relative to origin (the camera
  /// centre, subtracted in double so that the floats sent keep what precision the
  /// positions have far from the coordinate origin).
  void set_body_positions(const std::vector<float>& xyz, const double origin[3]);
  /// Their radii and colour values in [0, 1]: only when these changed.
  void set_body_attributes(const std::vector<double>& radius, const std::vector<float>& values);
  /// Bodies drawn as rings on top (a picked body and its neighbours).
  void set_highlights(const ParticleSystem& ps, const std::vector<std::size_t>& indices,
                      const double origin[3]);

  void clear(int width, int height) const;
  void draw_bodies(const DrawParams& p) const;
  void draw_highlights(const DrawParams& p, const float rgb[3]) const;
  /// Line segments (pairs of points relative to the origin), on top of everything.
  void draw_lines(const std::vector<float>& xyz, const DrawParams& p, const float rgba[4]);

 private:
  // One VAO per set of instances, both sharing the corner quad; per instance a position
  // (3 floats) and, in a buffer of its own, a radius and a colour value (2 floats).
  struct Batch {
    GLuint vao = 0, positions = 0, attributes = 0;
    GLsizei positions_count = 0, attributes_count = 0;
  };
  void make_batch(Batch& b) const;
  static void upload_positions(Batch& b, const std::vector<float>& xyz);
  static void upload_attributes(Batch& b, const std::vector<float>& radius_value);
  void set_common_uniforms(const GlProgram& program, const DrawParams& p) const;
  void draw_batch(const Batch& b, const DrawParams& p, bool ring, const float rgb[3]) const;

  GlProgram bodies_program_;
  GlProgram lines_program_;
  GLuint quad_ = 0;
  GLuint colormap_ = 0;
  Batch bodies_, highlights_;
  GLuint lines_vao_ = 0, lines_vbo_ = 0;
  float depth_scale_ = 1;  // |p - origin| of the farthest body: maps depth into [-1, 1]
  double largest_radius_ = 0;
  std::vector<float> scratch_, scratch_attributes_;
};

}  // namespace nbody::viewer
