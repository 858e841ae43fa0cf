// The scene's light: one sun, a sky/ground ambient, a soft highlight. Colours are linear;
// to_display applies the display's gamma (the frames are UNORM).
const vec3 kSunDirection = normalize(vec3(0.45, 1.0, 0.55));
const vec3 kSunColour = vec3(1.0, 0.95, 0.85);
const vec3 kSky = vec3(0.30, 0.36, 0.48);
const vec3 kGround = vec3(0.12, 0.10, 0.09);
// The clear colour (display values) that distant ground fades into.
const vec3 kBackground = vec3(0.055, 0.065, 0.085);

// `shine`: the highlight's strength (cloth is matte, the sphere polished).
vec3 shade(vec3 albedo, vec3 n, vec3 world, vec3 eye, float shine, float shadow) {
  vec3 v = normalize(eye - world);
  vec3 h = normalize(kSunDirection + v);
  float diffuse = max(dot(n, kSunDirection), 0.0) * shadow;
  float highlight = pow(max(dot(n, h), 0.0), 48.0) * shine * shadow;
  vec3 ambient = mix(kGround, kSky, 0.5 + 0.5 * n.y);
  return albedo * (ambient + diffuse * kSunColour) + highlight * kSunColour;
}

vec3 to_display(vec3 linear) { return pow(clamp(linear, 0.0, 1.0), vec3(1.0 / 2.2)); }
