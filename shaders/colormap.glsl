// Colour maps for scalar data. Map 0 is the ramp of `loom run --png` (runtime/render/
// colormap.cpp holds the same stops; render_scene_test checks they agree).
const int kColormapRamp = 0;
const int kColormapGrey = 1;
const int kColormapCoolWarm = 2;

vec3 colormap(float t, int map) {
  t = clamp(t, 0.0, 1.0);
  if (map == kColormapGrey) return vec3(t);
  if (map == kColormapCoolWarm) {  // diverging: blue, light grey at 0.5, red
    vec3 cool = vec3(0.23, 0.30, 0.75), mid = vec3(0.87, 0.87, 0.87), warm = vec3(0.71, 0.02, 0.15);
    return t < 0.5 ? mix(cool, mid, t * 2.0) : mix(mid, warm, t * 2.0 - 1.0);
  }
  const vec3 stops[5] = vec3[](vec3(0.05, 0.03, 0.25), vec3(0.23, 0.32, 0.55), vec3(0.13, 0.57, 0.55),
                               vec3(0.48, 0.82, 0.33), vec3(0.99, 0.91, 0.14));
  float s = t * 4.0;
  int i = min(3, int(s));
  return mix(stops[i], stops[i + 1], s - float(i));
}
