#include "runtime/render/colormap.h"

#include <algorithm>

namespace loom {

void colormap_ramp(double t, uint8_t* rgb) {
  static const double stops[5][3] = {{0.05, 0.03, 0.25},
                                     {0.23, 0.32, 0.55},
                                     {0.13, 0.57, 0.55},
                                     {0.48, 0.82, 0.33},
                                     {0.99, 0.91, 0.14}};
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  int i = std::min(3, static_cast<int>(t));
  double f = t - i;
  for (int c = 0; c < 3; ++c)
    rgb[c] = static_cast<uint8_t>(255.0 * (stops[i][c] * (1 - f) + stops[i + 1][c] * f) + 0.5);
}

}  // namespace loom
