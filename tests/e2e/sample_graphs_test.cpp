// Every sample graph in assets/graphs is a regression test with checked numbers: plain C++
// reference loops for heat, life, julia, n-body and cloth; conservation laws for MPM.
#include "tests/e2e/e2e_util.h"

#include <array>
#include <cmath>
#include <vector>

using namespace loom;
using namespace loom::test;

namespace {

std::string sample(const std::string& name) { return source_path("assets/graphs/" + name); }

template <typename T>
std::vector<T> copy_of(const ArrayView& v) {
  std::vector<T> out(v.bytes / sizeof(T));
  std::memcpy(out.data(), v.data, v.bytes);
  return out;
}

}  // namespace

TEST(Samples, HeatMatchesReferenceAndConservesHeat) {
  Program p(no_cache());
  p.load_file(sample("heat.loom.json"));
  p.run_pipeline("init");
  const int n = 256, steps = 50;  // each step is two diffusion sweeps (ping-pong)
  std::vector<float> t(n * n, 0.0f), s(n * n, 0.0f);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      t[i * n + j] = (i >= 96 && i < 160 && j >= 96 && j < 160) ? 1.0f : 0.0f;
  auto sweep = [&](const std::vector<float>& a, std::vector<float>& b) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < n - 1; ++j) {
        float c = a[i * n + j];
        b[i * n + j] = c + 0.2f * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] +
                                   a[i * n + j + 1] - 4.0f * c);
      }
  };
  for (int k = 0; k < steps; ++k) {
    p.run_pipeline("step");
    sweep(t, s);
    sweep(s, t);
  }
  std::vector<float> got = copy_of<float>(p.array("temperature"));
  double total = 0;
  for (int i = 0; i < n * n; ++i) {
    ASSERT_NEAR(got[static_cast<size_t>(i)], t[static_cast<size_t>(i)], 1e-5)
        << "cell " << i / n << "," << i % n;
    total += got[static_cast<size_t>(i)];
  }
  EXPECT_NEAR(total, 64.0 * 64.0, 1e-2);   // far from the boundary: no heat lost yet
  EXPECT_EQ(p.stats().instantiations, 3);  // init + diffuse for each ping-pong direction
}

TEST(Samples, LifeIsExact) {
  Program p(no_cache());
  p.load_file(sample("life.loom.json"));
  p.run_pipeline("init");
  const int n = 128;
  std::vector<int32_t> a(n * n), b(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      a[i * n + j] = ((i >= 64 && (i * 7 + j * 13) % 5 == 0) || (i == 1 && j == 2) ||
                      (i == 2 && j == 3) || (i == 3 && j >= 1 && j <= 3))
                         ? 1
                         : 0;
  ASSERT_EQ(copy_of<int32_t>(p.array("cells")), a);
  auto generation = [&](const std::vector<int32_t>& src, std::vector<int32_t>& dst) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        int alive = 0;
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            if (di || dj) alive += src[((i + di + n) % n) * n + (j + dj + n) % n];
        int c = src[i * n + j];
        dst[i * n + j] = (alive == 3 || (c == 1 && alive == 2)) ? 1 : 0;
      }
  };
  for (int k = 0; k < 40; ++k) {
    p.run_pipeline("step");
    generation(a, b);
    generation(b, a);
  }
  EXPECT_EQ(copy_of<int32_t>(p.array("cells")), a);
  int alive = 0;
  for (int32_t c : a) alive += c;
  EXPECT_GT(alive, 50);  // the board did not simply die out
}

TEST(Samples, JuliaMatchesReferenceIterations) {
  Program p(no_cache());
  p.load_file(sample("julia.loom.json"));
  p.run_pipeline("init");
  TextureView img = p.texture("image");
  ASSERT_EQ(img.size, (std::vector<int64_t>{512, 512}));
  int differing = 0, exterior = 0;
  for (int y = 0; y < 512; ++y)
    for (int x = 0; x < 512; ++x) {
      float zx = static_cast<float>(x) / 512.0f * 3.0f - 1.5f,
            zy = static_cast<float>(y) / 512.0f * 2.0f - 1.0f;
      int it = 0;
      while (!(zx * zx + zy * zy > 4.0f || it >= 200)) {
        float nx = zx * zx - zy * zy - 0.8f, ny = 2.0f * zx * zy + 0.156f;
        zx = nx;
        zy = ny;
        ++it;
      }
      float t = static_cast<float>(it) / 200.0f;
      int want = static_cast<int>(std::lround(std::clamp(0.35f + 0.65f * t, 0.0f, 1.0f) * 255.0f));
      int got = img.data[(static_cast<size_t>(y) * 512 + static_cast<size_t>(x)) * 4 + 2];
      exterior += it < 200;
      if (std::abs(got - want) > 1) ++differing;
    }
  // Points on the fractal's boundary are chaotic: a last-bit difference in float rounding
  // (fused multiply-add, vector math) may change their escape iteration. Allow 0.5 %.
  EXPECT_LT(differing, 512 * 512 / 200) << differing << " pixels differ";
  EXPECT_GT(exterior, 512 * 512 / 4);
  std::string file = (std::filesystem::temp_directory_path() / "loom_julia.npy").string();
  p.dump_npy("image", file);  // textures dump as (height, width, channels) u8
  EXPECT_GT(std::filesystem::file_size(file), 512u * 512u * 4u);
}

TEST(Samples, NbodyMatchesReferenceAndConservesMomentum) {
  Program p(no_cache());
  p.load_file(sample("nbody.loom.json"));
  p.run_pipeline("init");
  const int n = 256;
  std::vector<std::array<float, 3>> pos(n), vel(n);
  for (int i = 0; i < n; ++i) {
    float f = static_cast<float>(i);
    pos[i] = {std::cos(f * 0.37f) * (1.0f + f / 256.0f), std::sin(f * 0.37f) * (1.0f + f / 256.0f),
              std::fmod(f, 7.0f) * 0.05f - 0.15f};
    vel[i] = {-std::sin(f * 0.37f) * 0.3f, std::cos(f * 0.37f) * 0.3f, 0.0f};
  }
  const float dt = 0.001f, mass = 0.00390625f;
  for (int step = 0; step < 10; ++step) {
    p.run_pipeline("step");
    std::vector<std::array<float, 3>> acc(n, {0, 0, 0});
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        float d[3] = {pos[j][0] - pos[i][0], pos[j][1] - pos[i][1], pos[j][2] - pos[i][2]};
        float r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01f;
        float inv = 1.0f / std::pow(r2, 1.5f);
        for (int c = 0; c < 3; ++c) acc[i][c] += d[c] * inv;
      }
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) vel[i][c] += acc[i][c] * (mass * dt);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) pos[i][c] += vel[i][c] * dt;
  }
  std::vector<float> got_pos = copy_of<float>(p.array("pos")),
                     got_vel = copy_of<float>(p.array("vel"));
  double momentum[3] = {0, 0, 0}, initial[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i) {
    float f = static_cast<float>(i);
    initial[0] += -std::sin(f * 0.37f) * 0.3f;
    initial[1] += std::cos(f * 0.37f) * 0.3f;
    for (int c = 0; c < 3; ++c) {
      ASSERT_NEAR(got_pos[static_cast<size_t>(i * 3 + c)], pos[i][c], 1e-4) << i;
      ASSERT_NEAR(got_vel[static_cast<size_t>(i * 3 + c)], vel[i][c], 1e-4) << i;
      momentum[c] += got_vel[static_cast<size_t>(i * 3 + c)];
    }
  }
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(momentum[c], initial[c], 1e-3) << "component " << c;
}

TEST(Samples, MpmTransfersConserveMassAndMomentum) {
  Program p(no_cache());
  p.load_file(sample("mpm88.loom.json"));
  p.run_pipeline("init");
  const int n = 2048;
  const double p_mass = 0.00006103515625;
  p.launch("clear_grid");
  p.launch("p2g");
  std::vector<float> gm = copy_of<float>(p.array("grid_m")), gv = copy_of<float>(p.array("grid_v"));
  double mass = 0, mom[2] = {0, 0};
  for (size_t c = 0; c < gm.size(); ++c) {
    mass += gm[c];
    mom[0] += gv[2 * c];
    mom[1] += gv[2 * c + 1];
  }
  EXPECT_NEAR(mass, n * p_mass, 1e-3 * n * p_mass);
  // P2G stores momentum (mass * velocity) on the grid; APIC's affine term sums to zero.
  EXPECT_NEAR(mom[0], 0.0, 1e-6);
  EXPECT_NEAR(mom[1], -1.0 * n * p_mass, 1e-3 * n * p_mass);
  for (int s = 0; s < 20; ++s) p.run_pipeline("step");
  std::vector<float> x = copy_of<float>(p.array("x")), J = copy_of<float>(p.array("J"));
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(x[2 * i]) && std::isfinite(x[2 * i + 1]) && std::isfinite(J[i])) << i;
    EXPECT_GT(x[2 * i], 0.0f);
    EXPECT_LT(x[2 * i], 1.0f);
    EXPECT_GT(x[2 * i + 1], 0.0f);
    EXPECT_LT(x[2 * i + 1], 1.0f);
    EXPECT_GT(J[i], 0.5f);
    EXPECT_LT(J[i], 1.5f);
  }
  // falling under gravity for 20 frames of 10 substeps
  std::vector<float> v = copy_of<float>(p.array("v"));
  double vy = 0;
  for (int i = 0; i < n; ++i) vy += v[2 * i + 1];
  EXPECT_LT(vy / n, -1.0);
}

// Mass-spring cloth over a sphere: against the same integration in plain C++ for a while
// (float drift stays small), then its invariants: nothing inside the sphere, springs not
// overstretched, the cloth resting on the sphere's top.
TEST(Samples, ClothMatchesReferenceAndDrapesOverTheSphere) {
  Program p(no_cache());
  p.load_file(sample("cloth.loom.json"));
  p.run_pipeline("init");
  const int n = 32;
  using V = std::array<float, 3>;
  std::vector<V> x(n * n), v(n * n, V{0, 0, 0});
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) x[i * n + j] = {i / 31.0f - 0.5f, 0.6f, j / 31.0f - 0.5f};
  auto len = [](V a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); };
  auto substep = [&] {
    const float dt = 0.001f, k = 30000.0f;
    std::vector<V> nv(v.size());
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        V p0 = x[i * n + j], f{0, -9.8f, 0};
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) {
            int ni = i + a - 1, nj = j + b - 1;
            if (ni < 0 || nj < 0 || ni >= n || nj >= n || (a == 1 && b == 1)) continue;
            V d{x[ni * n + nj][0] - p0[0], x[ni * n + nj][1] - p0[1], x[ni * n + nj][2] - p0[2]};
            float l = len(d),
                  rest = std::sqrt(float((a - 1) * (a - 1) + (b - 1) * (b - 1))) / 31.0f;
            float s = k * (l - rest) / std::max(l, 1e-6f);
            for (int c = 0; c < 3; ++c) f[c] += s * d[c];
          }
        V w;
        for (int c = 0; c < 3; ++c) w[c] = (v[i * n + j][c] + dt * f[c]) * 0.9995f;
        float r = len(p0);
        if (r < 0.31f) {
          V nrm{p0[0] / r, p0[1] / r, p0[2] / r};
          float into = std::min(w[0] * nrm[0] + w[1] * nrm[1] + w[2] * nrm[2], 0.0f);
          for (int c = 0; c < 3; ++c) w[c] = (w[c] - into * nrm[c]) * 0.9f;
        }
        nv[i * n + j] = w;
      }
    v = nv;
    for (size_t q = 0; q < x.size(); ++q) {
      for (int c = 0; c < 3; ++c) x[q][c] += dt * v[q][c];
      float r = len(x[q]);
      if (r < 0.3f)
        for (int c = 0; c < 3; ++c) x[q][c] *= 0.3f / std::max(r, 1e-6f);
    }
  };
  for (int step = 0; step < 20; ++step) {
    p.run_pipeline("step");
    for (int s = 0; s < 5; ++s) substep();
  }
  std::vector<float> got = copy_of<float>(p.array("x"));
  for (size_t q = 0; q < x.size(); ++q)
    for (int c = 0; c < 3; ++c)
      ASSERT_NEAR(got[q * 3 + c], x[q][c], 2e-4) << "vertex " << q << " component " << c;

  for (int step = 0; step < 280; ++step) p.run_pipeline("step");
  got = copy_of<float>(p.array("x"));
  auto at = [&](int i, int j) {
    return V{got[(i * n + j) * 3], got[(i * n + j) * 3 + 1], got[(i * n + j) * 3 + 2]};
  };
  float stretch = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      EXPECT_GE(len(at(i, j)), 0.3f - 1e-4f)
          << "vertex " << i << "," << j << " is inside the sphere";
      if (i + 1 < n) {
        V a = at(i, j), b = at(i + 1, j);
        stretch = std::max(stretch, len(V{a[0] - b[0], a[1] - b[1], a[2] - b[2]}) * 31.0f);
      }
    }
  EXPECT_LT(stretch, 1.5f);                 // springs hold the cloth together
  EXPECT_NEAR(at(16, 16)[1], 0.3f, 0.02f);  // resting on top of the sphere
  EXPECT_LT(at(0, 0)[1], 0.0f);             // the corners hang
}

TEST(Samples, EveryAssetRunsFromTheCommandLineApi) {
  for (const auto& entry : std::filesystem::directory_iterator(source_path("assets/graphs"))) {
    if (entry.path().extension() != ".json") continue;
    Program p(no_cache());
    p.load_file(entry.path().string());
    ASSERT_TRUE(p.has_pipeline("init")) << entry.path();
    ASSERT_TRUE(p.has_pipeline("step")) << entry.path();
    p.run_pipeline("init");
    p.run_pipeline("step");
  }
}
