// Draws simulation data into a rectangle of a frame: points (a field or ndarray of 2-d or 3-d
// positions), textures on quads (a slice of a 3-d one) and OBJ meshes whose vertices a field
// can move. Data is host memory; it is uploaded (through staging, recorded for the next
// frame, never waiting) only when the caller says it changed: update() always, update(data,
// revision) when `revision` differs from the last one. Styles (colours, sizes, ranges,
// slices) cost nothing to change.
//
//   SceneRenderer scene(loop);
//   PointsLayer& particles = scene.add_points();
//   ... per frame: particles.update(data, revision); scene.draw(frame, rect, camera);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/common/kernel_abi.h"
#include "runtime/render/camera.h"
#include "runtime/render/frame_loop.h"
#include "runtime/render/math.h"
#include "runtime/render/mesh.h"

namespace loom::render {

struct Color {
  float r = 1, g = 1, b = 1, a = 1;
};

enum class Colormap : int32_t { Ramp = 0, Grey = 1, CoolWarm = 2 };  // shaders/colormap.glsl

// Host float positions: `count` points of `dims` (2 or 3) components; 2-d points lie at z = 0.
struct PositionData {
  std::string name = "positions";  // names the data in errors
  const float* data = nullptr;
  size_t count = 0;
  int dims = 3;
  size_t stride = 0;            // floats from one point to the next; 0: dims (AoS, packed)
  size_t component_stride = 1;  // floats from one component to the next (SoA: the point count)
};

struct PointData {
  PositionData positions;
  const float* scalars = nullptr;  // optional, one per point: coloured through the colour map
  size_t scalar_stride = 1;
  const float* rgba = nullptr;  // optional, four floats in [0, 1] per point (wins over scalars)
  size_t rgba_stride = 4;
};

struct PointStyle {
  float size = 5.0f;                       // diameter in pixels
  Color color{0.96f, 0.62f, 0.22f, 1.0f};  // without scalars or rgba
  Colormap colormap = Colormap::Ramp;
  float scalar_min = 0, scalar_max = 0;  // equal: the data's range at its last upload
  bool shaded = true;                    // lit like small spheres; false: flat discs
};

struct TextureData {
  std::string name = "texture";
  TextureFormat format = TextureFormat::RGBA8;
  const void* texels = nullptr;  // x fastest, then y, then z; floats, or bytes for rgba8
  uint32_t width = 0, height = 0, depth = 1;  // depth 1: a 2-d texture
};

enum class TextureDisplay : uint8_t {
  Auto,      // r32f through the colour map, rg32f as red-green, others as colours
  Color,     // rgb (alpha blends over the background)
  Colormap,  // the first channel through the colour map
  RedGreen,  // a 2-vector field: r and g, blue 0
};

struct TextureStyle {
  TextureDisplay display = TextureDisplay::Auto;
  Colormap colormap = Colormap::Ramp;
  float value_min = 0, value_max = 0;  // equal: the data's range (colour map) or 0..1 (colours)
  uint32_t slice = 0;                  // 3-d textures: the z slice shown (clamped)
  // The world rectangle, texel row 0 at y0 (world y up). All zero: x in [0, w/max(w,h)],
  // y in [0, h/max(w,h)], at z = 0.
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0, z = 0;
  bool linear = false;  // linear filtering where the device filters the format; else nearest
};

struct MeshStyle {
  Color front{0.86f, 0.50f, 0.32f, 1.0f};  // counter-clockwise side
  Color back{0.33f, 0.52f, 0.78f, 1.0f};
};

class SceneRenderer;
struct ScenePipelines;  // pipelines, samplers and descriptor sets shared by a scene's layers

class PointsLayer {
 public:
  ~PointsLayer();
  // Throws loom::Error naming the data for null data, dims other than 2 or 3.
  void update(const PointData& data);
  bool update(const PointData& data, uint64_t revision);  // true when it uploaded
  size_t count() const { return count_; }
  const Bounds& bounds() const { return bounds_; }
  PointStyle style;
  bool visible = true;

 private:
  friend class SceneRenderer;
  explicit PointsLayer(FrameLoop& loop);
  FrameLoop* loop_;
  std::unique_ptr<vk::GpuBuffer> buffer_;
  size_t count_ = 0;
  Bounds bounds_;
  float data_min_ = 0, data_max_ = 0;
  int color_mode_ = 0;
  bool uploaded_ = false;
  uint64_t revision_ = 0;
};

class TextureLayer {
 public:
  ~TextureLayer();
  // Throws loom::Error naming the texture for missing texels or sizes, or a format the
  // device cannot sample.
  void update(const TextureData& data);
  bool update(const TextureData& data, uint64_t revision);
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  uint32_t depth() const { return depth_; }
  Bounds bounds() const;
  TextureStyle style;
  bool visible = true;

 private:
  friend class SceneRenderer;
  TextureLayer(FrameLoop& loop, std::shared_ptr<ScenePipelines> pipelines);
  VkDescriptorSet descriptor(bool linear);
  void release_set();
  FrameLoop* loop_;
  std::shared_ptr<ScenePipelines> pipelines_;
  std::unique_ptr<vk::GpuImage> image_;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  bool set_linear_ = false;
  TextureFormat format_ = TextureFormat::RGBA8;
  uint32_t width_ = 0, height_ = 0, depth_ = 0;
  float data_min_ = 0, data_max_ = 1;
  bool uploaded_ = false;
  uint64_t revision_ = 0;
};

class MeshLayer {
 public:
  ~MeshLayer();
  const Mesh& mesh() const { return mesh_; }
  // Moves the vertices; normals are recomputed. Throws loom::Error when the point count is
  // not the mesh's vertex count (naming both), or for dims other than 2 or 3.
  void update_positions(const PositionData& positions);
  bool update_positions(const PositionData& positions, uint64_t revision);
  void reset_positions();  // back to the file's
  const Bounds& bounds() const { return bounds_; }
  MeshStyle style;
  bool visible = true;

 private:
  friend class SceneRenderer;
  MeshLayer(FrameLoop& loop, Mesh mesh);
  void upload_vertices(const std::vector<float>& xyz);
  FrameLoop* loop_;
  Mesh mesh_;
  std::unique_ptr<vk::GpuBuffer> vertices_, indices_;
  std::vector<float> scratch_;  // positions and normals, reused between updates
  Bounds bounds_;
  bool uploaded_ = false;
  uint64_t revision_ = 0;
};

class SceneRenderer {
 public:
  // Pipelines for `loop`'s render pass. The loop must outlive the renderer.
  explicit SceneRenderer(FrameLoop& loop);
  ~SceneRenderer();  // hands its resources to the loop until the frames using them completed
  SceneRenderer(const SceneRenderer&) = delete;
  SceneRenderer& operator=(const SceneRenderer&) = delete;

  PointsLayer& add_points();
  TextureLayer& add_texture();
  MeshLayer& add_mesh(Mesh mesh);
  void remove(const PointsLayer& layer);
  void remove(const TextureLayer& layer);
  void remove(const MeshLayer& layer);

  // Draws the visible layers (textures, then meshes, then points) into `viewport`, in pixels
  // of the frame (clipped to it), after clearing it to `background` when that is set. Call
  // between FrameLoop::begin_frame and end_frame, before anything meant to cover it (the UI).
  void draw(const Frame& frame, const Rect& viewport, const Camera& camera);
  bool clear_background = true;
  Color background{0.07f, 0.08f, 0.10f, 1.0f};

  Bounds bounds() const;  // of the visible layers, for Camera::fit

 private:
  FrameLoop& loop_;
  std::shared_ptr<ScenePipelines> pipelines_;
  std::vector<std::unique_ptr<PointsLayer>> points_;
  std::vector<std::unique_ptr<TextureLayer>> textures_;
  std::vector<std::unique_ptr<MeshLayer>> meshes_;
};

}  // namespace loom::render
