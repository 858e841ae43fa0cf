// Linked into every executable of the sanitizer build (cmake/Sanitizers.cmake), nowhere else.
//
// The Vulkan loader dlcloses lavapipe and the validation layer when an instance is
// destroyed. Memory a library's globals still point to then looks leaked at exit, and the
// frames of its stacks read "<unknown module>", which no suppression can name. Loom itself
// never unloads a library, so in this build nothing is unloaded: the library stays mapped,
// its globals keep their memory reachable, and a real leak inside it is named.
extern "C" int dlclose(void*) { return 0; }
