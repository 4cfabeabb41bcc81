#include "viewer/scene_renderer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "render/colormap.hpp"

namespace nbody::viewer {

namespace {

// (p - centre) -> NDC through `view`; the quad corner is then pushed out in pixels, so a
// point keeps its pixel size at any zoom and a disc its size in simulation units.
constexpr const char* kBodyVertex = R"(#version 330 core
layout(location = 0) in vec2 corner;
layout(location = 1) in vec3 position;
layout(location = 2) in float radius;
layout(location = 3) in float value;
uniform mat3 view;
uniform float depth_scale;
uniform vec2 pixel_to_ndc;
uniform float units_to_pixels;
uniform float point_pixels;
uniform float extra_pixels;
uniform int discs;
out vec2 local;
out float colour_value;
void main() {
  vec3 p = view * position;
  float diameter = (discs != 0 ? max(2.0 * radius * units_to_pixels, 2.0) : point_pixels) + extra_pixels;
  local = corner;
  colour_value = value;
  gl_Position = vec4(p.xy + corner * (0.5 * diameter) * pixel_to_ndc, -p.z / depth_scale, 1.0);
}
)";

// gl_PointCoord-style cut-out: fragments outside the unit circle of the quad are dropped.
constexpr const char* kBodyFragment = R"(#version 330 core
in vec2 local;
in float colour_value;
uniform sampler2D colormap;
uniform int ring;
uniform vec3 ring_colour;
out vec4 colour;
void main() {
  float r2 = dot(local, local);
  if (r2 > 1.0) discard;
  if (ring != 0) {
    if (r2 < 0.55) discard;
    colour = vec4(ring_colour, 1.0);
    return;
  }
  // Texel centres: value 0 and 1 land on the first and last colour exactly.
  float u = (0.5 + colour_value * 255.0) / 256.0;
  colour = vec4(texture(colormap, vec2(u, 0.5)).rgb, 1.0);
}
)";

constexpr const char* kLineVertex = R"(#version 330 core
layout(location = 0) in vec3 position;
uniform mat3 view;
void main() {
  vec3 p = view * position;
  gl_Position = vec4(p.xy, 0.0, 1.0);
}
)";

constexpr const char* kLineFragment = R"(#version 330 core
uniform vec4 line_colour;
out vec4 colour;
void main() { colour = line_colour; }
)";

constexpr GLsizei kPositionFloats = 3;   // x, y, z
constexpr GLsizei kAttributeFloats = 2;  // radius, colour value

}  // namespace

SceneRenderer::SceneRenderer()
    : bodies_program_(kBodyVertex, kBodyFragment), lines_program_(kLineVertex, kLineFragment) {
  const float corners[] = {-1, -1, 1, -1, -1, 1, 1, 1};  // a triangle strip
  glGenBuffers(1, &quad_);
  glBindBuffer(GL_ARRAY_BUFFER, quad_);
  glBufferData(GL_ARRAY_BUFFER, sizeof(corners), corners, GL_STATIC_DRAW);
  make_batch(bodies_);
  make_batch(highlights_);

  glGenVertexArrays(1, &lines_vao_);
  glGenBuffers(1, &lines_vbo_);
  glBindVertexArray(lines_vao_);
  glBindBuffer(GL_ARRAY_BUFFER, lines_vbo_);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), nullptr);
  glBindVertexArray(0);

  // The shared colormap as a 256 x 1 texture, interpolated linearly between texels.
  std::vector<std::uint8_t> texels;
  for (int i = 0; i < 256; ++i) {
    const render::Rgb c = render::colormap(i / 255.0);
    texels.insert(texels.end(), {c.r, c.g, c.b});
  }
  glGenTextures(1, &colormap_);
  glBindTexture(GL_TEXTURE_2D, colormap_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, 256, 1, 0, GL_RGB, GL_UNSIGNED_BYTE, texels.data());
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

SceneRenderer::~SceneRenderer() {
  for (Batch* b : {&bodies_, &highlights_}) {
    glDeleteVertexArrays(1, &b->vao);
    glDeleteBuffers(1, &b->positions);
    glDeleteBuffers(1, &b->attributes);
  }
  glDeleteVertexArrays(1, &lines_vao_);
  glDeleteBuffers(1, &lines_vbo_);
  glDeleteBuffers(1, &quad_);
  glDeleteTextures(1, &colormap_);
}

void SceneRenderer::make_batch(Batch& b) const {
  glGenVertexArrays(1, &b.vao);
  glGenBuffers(1, &b.positions);
  glGenBuffers(1, &b.attributes);
  glBindVertexArray(b.vao);
  glBindBuffer(GL_ARRAY_BUFFER, quad_);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 2 * sizeof(float), nullptr);
  // attribute: buffer, floats, offset in floats (position; radius, value)
  struct Layout {
    GLuint attribute, buffer;
    GLint floats;
    GLsizei stride;
    std::size_t offset;
  };
  const Layout layouts[] = {{1, b.positions, 3, kPositionFloats, 0},
                            {2, b.attributes, 1, kAttributeFloats, 0},
                            {3, b.attributes, 1, kAttributeFloats, 1}};
  for (const Layout& l : layouts) {
    glBindBuffer(GL_ARRAY_BUFFER, l.buffer);
    glEnableVertexAttribArray(l.attribute);
    glVertexAttribPointer(l.attribute, l.floats, GL_FLOAT, GL_FALSE,
                          l.stride * static_cast<GLsizei>(sizeof(float)),
                          reinterpret_cast<const void*>(l.offset * sizeof(float)));
    glVertexAttribDivisor(l.attribute, 1);  // one record per body, not per corner
  }
  glBindVertexArray(0);
}

void SceneRenderer::upload_positions(Batch& b, const std::vector<float>& xyz) {
  glBindBuffer(GL_ARRAY_BUFFER, b.positions);
  // A fresh store each frame: the driver need not wait for the previous frame's draw.
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(xyz.size() * sizeof(float)), xyz.data(),
               GL_STREAM_DRAW);
  b.positions_count = static_cast<GLsizei>(xyz.size() / kPositionFloats);
}

void SceneRenderer::upload_attributes(Batch& b, const std::vector<float>& radius_value) {
  glBindBuffer(GL_ARRAY_BUFFER, b.attributes);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(radius_value.size() * sizeof(float)),
               radius_value.data(), GL_DYNAMIC_DRAW);
  b.attributes_count = static_cast<GLsizei>(radius_value.size() / kAttributeFloats);
}

void SceneRenderer::set_body_positions(const std::vector<float>& xyz, const double origin[3]) {
  const std::size_t n = xyz.size() / 3;
  scratch_.resize(3 * n);
  double farthest2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = xyz[3 * i] - origin[0], dy = xyz[3 * i + 1] - origin[1],
                 dz = xyz[3 * i + 2] - origin[2];
    scratch_[3 * i] = static_cast<float>(dx);
    scratch_[3 * i + 1] = static_cast<float>(dy);
    scratch_[3 * i + 2] = static_cast<float>(dz);
    farthest2 = std::max(farthest2, dx * dx + dy * dy + dz * dz);
  }
  depth_scale_ = static_cast<float>(1.01 * std::sqrt(farthest2) + largest_radius_ + 1e-30);
  upload_positions(bodies_, scratch_);
}

void SceneRenderer::set_body_attributes(const std::vector<double>& radius,
                                        const std::vector<float>& values) {
  scratch_attributes_.resize(kAttributeFloats * radius.size());
  largest_radius_ = 0;
  for (std::size_t i = 0; i < radius.size(); ++i) {
    scratch_attributes_[2 * i] = static_cast<float>(radius[i]);
    scratch_attributes_[2 * i + 1] = i < values.size() ? values[i] : 0.5f;
    largest_radius_ = std::max(largest_radius_, radius[i]);
  }
  upload_attributes(bodies_, scratch_attributes_);
}

void SceneRenderer::set_highlights(const ParticleSystem& ps,
                                   const std::vector<std::size_t>& indices,
                                   const double origin[3]) {
  scratch_.clear();
  scratch_attributes_.clear();
  for (std::size_t i : indices) {
    if (i >= ps.size()) continue;
    scratch_.insert(scratch_.end(), {static_cast<float>(ps.x[i] - origin[0]),
                                     static_cast<float>(ps.y[i] - origin[1]),
                                     static_cast<float>(ps.z[i] - origin[2])});
    scratch_attributes_.insert(scratch_attributes_.end(), {static_cast<float>(ps.radius[i]), 0.0f});
  }
  upload_positions(highlights_, scratch_);
  upload_attributes(highlights_, scratch_attributes_);
}

void SceneRenderer::clear(int width, int height) const {
  glViewport(0, 0, width, height);
  glClearColor(0, 0, 0, 1);
  glClearDepth(1.0);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
}

void SceneRenderer::set_common_uniforms(const GlProgram& program, const DrawParams& p) const {
  program.use();
  glUniformMatrix3fv(program.uniform("view"), 1, GL_TRUE, p.view.m);  // row-major
}

void SceneRenderer::draw_batch(const Batch& b, const DrawParams& p, bool ring,
                               const float rgb[3]) const {
  const GLsizei count = std::min(b.positions_count, b.attributes_count);
  if (count == 0) return;
  set_common_uniforms(bodies_program_, p);
  const GlProgram& program = bodies_program_;
  glUniform1f(program.uniform("depth_scale"), depth_scale_);
  glUniform2f(program.uniform("pixel_to_ndc"), 2.0f / static_cast<float>(p.width),
              2.0f / static_cast<float>(p.height));
  glUniform1f(program.uniform("units_to_pixels"), static_cast<float>(1.0 / p.units_per_pixel));
  glUniform1f(program.uniform("point_pixels"), p.point_pixels);
  // Rings sit around the body: a little larger than it is drawn.
  glUniform1f(program.uniform("extra_pixels"), ring ? 8.0f : 0.0f);
  glUniform1i(program.uniform("discs"), p.discs ? 1 : 0);
  glUniform1i(program.uniform("ring"), ring ? 1 : 0);
  glUniform3f(program.uniform("ring_colour"), rgb[0], rgb[1], rgb[2]);
  glUniform1i(program.uniform("colormap"), 0);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, colormap_);
  glBindVertexArray(b.vao);
  glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, count);
  glBindVertexArray(0);
}

void SceneRenderer::draw_bodies(const DrawParams& p) const {
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LEQUAL);
  const float unused[3] = {0, 0, 0};
  draw_batch(bodies_, p, false, unused);
  glDisable(GL_DEPTH_TEST);
}

void SceneRenderer::draw_highlights(const DrawParams& p, const float rgb[3]) const {
  draw_batch(highlights_, p, true, rgb);
}

void SceneRenderer::draw_lines(const std::vector<float>& xyz, const DrawParams& p,
                               const float rgba[4]) {
  if (xyz.size() < 6) return;
  set_common_uniforms(lines_program_, p);
  glUniform4f(lines_program_.uniform("line_colour"), rgba[0], rgba[1], rgba[2], rgba[3]);
  glBindBuffer(GL_ARRAY_BUFFER, lines_vbo_);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(xyz.size() * sizeof(float)), xyz.data(),
               GL_STREAM_DRAW);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glBindVertexArray(lines_vao_);
  glDrawArrays(GL_LINES, 0, static_cast<GLsizei>(xyz.size() / 3));
  glBindVertexArray(0);
  glDisable(GL_BLEND);
}

}  // namespace nbody::viewer
