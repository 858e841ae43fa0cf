/* loom.h: the C ABI of the Loom engine plugin (libloom.so).
 *
 * An engine loads compiled Loom modules (.loommod archives or module folders written by
 * `loom compile` or loom::AotModule) and runs their kernels on the CPU or on a Vulkan
 * device: Loom's own, or the engine's (loom_runtime_import_vulkan). The library links
 * neither the Loom compiler nor LLVM; graph documents (.loom.json) load only where the
 * `loom` command line is installed (it compiles them).
 *
 * Conventions
 * - Every struct a call reads or writes (info structs, the Vulkan import, results such as
 *   LoomModuleInfo or LoomMemoryUsage) begins with `struct_size`: set it to sizeof the struct,
 *   also before a call that fills it. Loom reads, and writes, only the fields that lie within
 *   it (fields it reads beyond it count as 0), so a program built against this header keeps
 *   working with a later library that added fields; 0, or a size smaller than the struct's
 *   first version, is LOOM_ERROR_INVALID_ARGUMENT. Arrays of them (loom_runtime_get_memory_usage,
 *   loom_kernel_get_resource_access): set the first element's struct_size; it is the stride.
 * - Every call returns a LoomResult; LOOM_SUCCESS is 0, errors are negative. On an error
 *   the thread's last error (loom_last_error, loom_last_error_message) says what and where
 *   (the module file, kernel, parameter or member), and no output is written. A successful
 *   call leaves the last error as it was.
 * - Handles are opaque values, never pointers Loom follows: every call looks each handle it
 *   is given up in a table first. A null handle is LOOM_ERROR_NULL_HANDLE; a destroyed one
 *   (a double destroy, a use after destroy, a kernel, pipeline, resource or pack handle of a
 *   destroyed module), one of another kind (a LoomArray cast to LoomTexture) or a value that
 *   never was a handle is LOOM_ERROR_INVALID_HANDLE naming the call and the argument. Never
 *   a crash, never memory of another object. Handles of two runtimes used together are
 *   LOOM_ERROR_WRONG_RUNTIME.
 * - Threads: the handle table is locked, so calls on different runtimes may run on
 *   different threads at the same time, and a stale handle is a clean error on any thread.
 *   The objects are not: one runtime and everything made from it (modules, kernels,
 *   pipelines, arrays, textures, argpacks) are used from one thread at a time. Loom checks
 *   it: a call on a runtime (or on anything made from it) while another thread's call is
 *   inside that runtime is refused with LOOM_ERROR_RUNTIME_BUSY, doing nothing, and the
 *   message names both calls. Calls never wait for each other; serialise them yourself. The
 *   same holds for a callback Loom makes (log, parallel_for, lock_queue, the memory hooks, a
 *   read-back's done): it may call Loom on other runtimes, and loom_last_error*, but a call
 *   on the runtime whose call runs it is LOOM_ERROR_RUNTIME_BUSY.
 * - Nothing is freed under an argpack: destroying an ndarray, texture, pack or module that
 *   a pack member refers to is refused with LOOM_ERROR_IN_USE (the message names the pack
 *   and the member); set the member to another object, or destroy the pack, first.
 * - A module's handles (kernels, pipelines, its arrays, textures and argpacks) stay valid
 *   across hot reloads and until the module is destroyed; export handles (VkBuffer, VkImage)
 *   of module resources change when a reload swaps the module (LOOM_RELOAD_SWAPPED).
 * - Vulkan: Loom never waits for the whole device. Launches go to Loom's queue (loom_launch,
 *   submitted by loom_runtime_submit or when Loom needs to) or into a command buffer the host
 *   records (loom_launch_into). The host's frames: see loom_runtime_begin_frame. On an engine's
 *   device (loom_runtime_import_vulkan) the engine owns the queue by default: no call submits
 *   to it or waits on it (LoomQueueMode).
 */
#ifndef LOOM_H_
#define LOOM_H_

#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#if defined(__GNUC__)
#define LOOM_API __attribute__((visibility("default")))
#else
#define LOOM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version --------------------------------------------------------------------------- */

#define LOOM_MAKE_VERSION(major, minor, patch) \
  (((uint32_t)(major) << 22) | ((uint32_t)(minor) << 12) | (uint32_t)(patch))
#define LOOM_VERSION_MAJOR(v) ((uint32_t)(v) >> 22)
#define LOOM_VERSION_MINOR(v) (((uint32_t)(v) >> 12) & 0x3ffu)
#define LOOM_VERSION_PATCH(v) ((uint32_t)(v)&0xfffu)
/* The ABI this header describes. A library of the same major version and an equal or later
 * minor version serves it. */
#define LOOM_HEADER_VERSION LOOM_MAKE_VERSION(3, 1, 0)

/* The library's ABI version (LOOM_MAKE_VERSION). */
LOOM_API uint32_t loom_version(void);
/* "loom 0.1.0 (abi 3.1.0, module format 3)": the product, the ABI and the module format
 * versions it reads. Static storage. */
LOOM_API const char* loom_version_string(void);

/* ---- errors ---------------------------------------------------------------------------- */

typedef enum LoomResult {
  LOOM_SUCCESS = 0,
  LOOM_ERROR_NULL_HANDLE = -1,      /* a handle or a required pointer was null */
  LOOM_ERROR_INVALID_ARGUMENT = -2, /* a value out of range, a bad enum, a size mismatch */
  LOOM_ERROR_WRONG_TYPE = -3, /* an argument or member of another kind (a texture for an ndarray) */
  LOOM_ERROR_WRONG_DTYPE = -4, /* element type or component count differs */
  LOOM_ERROR_WRONG_NDIM = -5,  /* number of dimensions differs */
  LOOM_ERROR_NOT_FOUND =
      -6,             /* no kernel, instantiation, pipeline, resource or member of that name */
  LOOM_ERROR_IO = -7, /* a file cannot be opened or read */
  LOOM_ERROR_CORRUPT_MODULE =
      -8, /* not a Loom module, truncated, a hash mismatch, bad metadata or code (invalid SPIR-V,
             a shader at odds with its kernel's metadata) */
  LOOM_ERROR_VERSION_MISMATCH = -9, /* a module format version this library does not read */
  LOOM_ERROR_MISSING_CAPABILITY =
      -10, /* the device lacks a feature, limit or CPU feature the module needs */
  LOOM_ERROR_WRONG_ARCH = -11, /* a module for another arch, or a Vulkan call on a CPU runtime */
  LOOM_ERROR_DEVICE = -12, /* the device failed (no device, out of device memory, device lost) */
  LOOM_ERROR_LAUNCH = -13, /* a launch failed (a bounds check or an assertion of a debug module) */
  LOOM_ERROR_NOT_SUPPORTED = -14, /* valid, but not something this runtime does (see the message) */
  LOOM_ERROR_WRONG_RUNTIME = -15, /* objects of two different runtimes used together */
  LOOM_ERROR_INVALID_HANDLE =
      -16, /* a handle that was destroyed, is of another kind, or never was a Loom handle */
  LOOM_ERROR_IN_USE = -17,    /* a destroy of what an argpack member still refers to */
  LOOM_ERROR_NOT_READY = -18, /* a read-back whose frame the engine has not completed yet */
  LOOM_ERROR_RUNTIME_BUSY =
      -19, /* another call is inside the same runtime (another thread's, or the call whose
              callback made this one): nothing was done (see "Threads" above) */
} LoomResult;

/* The result of the calling thread's last failed call (LOOM_SUCCESS when none failed). */
LOOM_API LoomResult loom_last_error(void);
/* Its message, naming the place: "cloth.loommod: kernel 'forces': parameter 'dt': ...".
 * Thread-local storage, valid until the thread's next failing call; "" when none. */
LOOM_API const char* loom_last_error_message(void);
/* Forgets the thread's last error. */
LOOM_API void loom_clear_last_error(void);
/* "LOOM_ERROR_WRONG_DTYPE"; "LOOM_ERROR_UNKNOWN" for values not in LoomResult. */
LOOM_API const char* loom_result_name(LoomResult result);

/* ---- handles and plain types ----------------------------------------------------------- */

typedef struct LoomRuntime_T* LoomRuntime;
typedef struct LoomModule_T* LoomModule;
typedef struct LoomKernel_T* LoomKernel;
typedef struct LoomPipeline_T* LoomPipeline;
typedef struct LoomArray_T* LoomArray; /* a field of a module, or an ndarray */
typedef struct LoomTexture_T* LoomTexture;
typedef struct LoomArgpack_T* LoomArgpack;
typedef struct LoomReadback_T* LoomReadback; /* a read recorded into an engine's command buffer */

typedef uint32_t LoomBool;

typedef enum LoomArch { LOOM_ARCH_CPU = 1, LOOM_ARCH_VULKAN = 2 } LoomArch;

typedef enum LoomDataType {
  LOOM_DTYPE_BOOL = 1, /* a 32-bit 0 or 1 in LoomArgument::value.i32 */
  LOOM_DTYPE_I8,
  LOOM_DTYPE_I16,
  LOOM_DTYPE_I32,
  LOOM_DTYPE_I64,
  LOOM_DTYPE_U8,
  LOOM_DTYPE_U16,
  LOOM_DTYPE_U32,
  LOOM_DTYPE_U64,
  LOOM_DTYPE_F32,
  LOOM_DTYPE_F64
} LoomDataType;

typedef enum LoomTextureFormat {
  LOOM_TEXTURE_R32F = 1,
  LOOM_TEXTURE_RG32F,
  LOOM_TEXTURE_RGBA32F,
  LOOM_TEXTURE_RGBA8
} LoomTextureFormat;

#define LOOM_MAX_DIMS 4
#define LOOM_MAX_COMPONENTS 16

/* ---- runtimes -------------------------------------------------------------------------- */

/* Messages that are not errors of a call (those are the call's LoomResult and
 * loom_last_error_message): a device that lacks something, a kernel run a slower way. */
typedef enum LoomLogLevel {
  LOOM_LOG_ERROR = 1,
  LOOM_LOG_WARNING = 2,
  LOOM_LOG_INFO = 3
} LoomLogLevel;
/* Called on the thread of the call that has something to say; `message` lives until the
 * callback returns. NULL: warnings go to stderr. */
typedef void (*LoomLogFn)(void* user, LoomLogLevel level, const char* message);

/* The engine's job system for CPU kernels: calls job(job_context, i) once for every i in
 * [0, count), on any threads (the calling one included), and returns when every call has
 * returned. `job` never throws or longjmps; Loom then starts no threads of its own. */
typedef void (*LoomJobFn)(void* job_context, uint32_t index);
typedef void (*LoomParallelForFn)(void* user, uint32_t count, LoomJobFn job, void* job_context);

typedef struct LoomRuntimeCreateInfo {
  uint32_t struct_size; /* sizeof(LoomRuntimeCreateInfo) */
  LoomArch arch;
  uint32_t cpu_threads;      /* CPU: worker threads; 0 = one per core (unless parallel_for) */
  const char* vulkan_device; /* Vulkan: NULL or "" the best device, an index, or part of its name */
  LoomBool validation; /* Vulkan: enable the validation layers (errors become LOOM_ERROR_DEVICE) */
  uint32_t frames_in_flight; /* host frames in flight for loom_launch_into; 0 = 2 */
  LoomLogFn log;             /* optional */
  void* log_user;
  /* CPU, optional: parallel tasks run on the engine's job system, cut into a few chunks per
   * worker (parallel_for_workers: the threads it runs jobs on; 0 = 1). */
  LoomParallelForFn parallel_for;
  void* parallel_for_user;
  uint32_t parallel_for_workers;
} LoomRuntimeCreateInfo;

/* A runtime on the CPU or on Loom's own Vulkan device. */
LOOM_API LoomResult loom_runtime_create(const LoomRuntimeCreateInfo* info, LoomRuntime* out);

/* The engine's Vulkan device, given as engines hand it to plugins (Unity's
 * IUnityGraphicsVulkan, Unreal's IVulkanDynamicRHI, Godot's RenderingDevice driver resources):
 * handles, the API version, the device extensions the engine enabled and, optionally, the
 * features it enabled. Nothing more is assumed: what is not declared is not used, and a
 * kernel that needs a feature not declared fails to load with LOOM_ERROR_MISSING_CAPABILITY
 * naming the kernel and the feature.
 * - The handles come from the Vulkan loader libloom.so links (the process's libvulkan), outlive
 *   the runtime and are never destroyed by Loom. The host and Loom share `queue`, from one
 *   thread at a time.
 * - api_version: the instance's VkApplicationInfo::apiVersion, 1.0 or later. Loom calls no
 *   Vulkan newer than it, and kernels need SPIR-V no newer than it takes (modules: `loom
 *   compile --vulkan-version`, 1.1 by default; 1.0 devices need modules compiled for 1.0, whose
 *   kernels use only the Vulkan 1.0 core features).
 * - Without timeline semaphores (Vulkan12Features::timelineSemaphore or the timeline
 *   semaphore features struct in enabled_features) Loom tracks its work with fences, and
 *   LoomSemaphore values must be 0 (binary semaphores).
 * - enabled_features: a VkPhysicalDeviceFeatures2 whose pNext chain holds what the engine
 *   enabled (VkPhysicalDeviceVulkan11/12Features or the per-feature structs, the atomic-float
 *   extensions' structs). create_info: instead, or as well, the VkDeviceCreateInfo itself (its
 *   pEnabledFeatures or features chain and its extensions). Both are read during the call only.
 * - get_instance_proc_addr: optional, the engine's vkGetInstanceProcAddr. Loom calls Vulkan
 *   through the loader it links; when the engine's resolves device functions differently
 *   (a layer of the engine's own), Loom logs a warning saying so.
 * - lock_queue / unlock_queue: optional, both or neither. With LOOM_QUEUE_SHARED, Loom calls
 *   them around every vkQueueSubmit and vkQueueWaitIdle it makes on `queue` (reads, uploads,
 *   loom_runtime_submit, a reload's wait), so an engine that submits from a render thread
 *   serialises Loom's with its own. With LOOM_QUEUE_ENGINE_OWNED (the default) Loom makes
 *   none. */
/* The engine's device-memory allocator (LoomVulkanDeviceImport::allocate_memory): returns a
 * block as vkAllocateMemory would, or an error VkResult. */
typedef VkResult (*LoomAllocateMemoryFn)(void* user, const VkMemoryAllocateInfo* info,
                                         VkDeviceMemory* memory);
typedef void (*LoomFreeMemoryFn)(void* user, VkDeviceMemory memory);

/* Who submits to the engine's queue (LoomVulkanDeviceImport::queue_mode).
 * - LOOM_QUEUE_ENGINE_OWNED, the default: no loom_* call submits to `queue` or waits on it.
 *   Work that is not a launch into the engine's command buffer (uploads of what the host
 *   wrote, image layouts, loom_launch, a hot reload's copies of state) is recorded by Loom and
 *   runs inside the next command buffer Loom records into: loom_launch_into,
 *   loom_pipeline_launch_into, loom_runtime_record, loom_array_read_into. Reads are recorded
 *   too (loom_array_read_into, loom_texture_read_into) and land once the engine's frame has
 *   completed (loom_runtime_begin_frame says when). Calls that would have to wait are
 *   LOOM_ERROR_NOT_SUPPORTED naming what to call instead: loom_array_read and
 *   loom_texture_read of data the device changed since it was last on the host,
 *   loom_runtime_submit, loom_runtime_wait while Loom's recorded work has not run, and
 *   loom_launch of kernels with return values or debug error records.
 * - LOOM_QUEUE_SHARED: Loom submits to `queue` where a call needs it (reads, uploads,
 *   loom_runtime_submit, a reload's wait), between lock_queue and unlock_queue. */
typedef enum LoomQueueMode { LOOM_QUEUE_ENGINE_OWNED = 0, LOOM_QUEUE_SHARED = 1 } LoomQueueMode;

typedef struct LoomVulkanDeviceImport {
  uint32_t struct_size; /* sizeof(LoomVulkanDeviceImport) */
  VkInstance instance;
  VkPhysicalDevice physical_device;
  VkDevice device;
  uint32_t queue_family_index; /* a family that does compute */
  VkQueue queue;
  uint32_t api_version;
  uint32_t enabled_extension_count;
  const char* const* enabled_extensions;             /* the device extensions the engine enabled */
  const VkPhysicalDeviceFeatures2* enabled_features; /* optional */
  const VkDeviceCreateInfo* create_info;             /* optional */
  PFN_vkGetInstanceProcAddr get_instance_proc_addr;  /* optional */
  uint32_t frames_in_flight;                         /* 0 = 2 */
  LoomLogFn log;                                     /* optional */
  void* log_user;
  void (*lock_queue)(void* user); /* optional, with unlock_queue */
  void (*unlock_queue)(void* user);
  void* queue_user;
  /* Pipelines: optional. pipeline_cache: the engine's VkPipelineCache (Unity hands one out);
   * Loom creates its pipelines in it and never destroys it. Otherwise Loom keeps its own,
   * started from pipeline_cache_data (what loom_runtime_get_pipeline_cache_data gave in an
   * earlier run; data of another device or driver is ignored with a warning). */
  VkPipelineCache pipeline_cache;
  const void* pipeline_cache_data;
  size_t pipeline_cache_data_size;
  /* Memory hooks, optional.
   * allocation_callbacks: the engine's (Unreal hands its own); Loom passes them to every
   * vkCreate*, vkAllocate*, vkDestroy* and vkFree* it calls on `device`. They must outlive the
   * runtime.
   * allocate_memory / free_memory (both or neither, LOOM_ERROR_INVALID_ARGUMENT otherwise):
   * every VkDeviceMemory block Loom needs comes from allocate_memory and goes back through
   * free_memory (all of them by loom_runtime_destroy). Loom still sub-allocates its resources
   * inside those blocks, and maps host-visible ones itself (vkMapMemory, unmapped before
   * free_memory): the engine must not map a block while Loom holds it. A VkResult other than
   * VK_SUCCESS makes Loom try another memory type, then fail with LOOM_ERROR_DEVICE.
   * Heap budgets: when enabled_extensions (or create_info) holds VK_EXT_memory_budget and
   * api_version is 1.1 or later, Loom allocates no block past a heap's budget (another memory
   * type, or LOOM_ERROR_DEVICE naming the resource, heap, budget and usage), and
   * loom_runtime_get_memory_usage reports each heap's budget and usage. */
  const VkAllocationCallbacks* allocation_callbacks;
  LoomAllocateMemoryFn allocate_memory;
  LoomFreeMemoryFn free_memory;
  void* memory_user;        /* passed to allocate_memory and free_memory */
  LoomQueueMode queue_mode; /* 0: LOOM_QUEUE_ENGINE_OWNED */
} LoomVulkanDeviceImport;

LOOM_API LoomResult loom_runtime_import_vulkan(const LoomVulkanDeviceImport* device,
                                               LoomRuntime* out);

/* Waits for the runtime's outstanding work on its own queue, then frees the runtime. Every
 * module, array, texture and argpack made from it must be destroyed first (an error that
 * destroys nothing otherwise). Null is a no-op success. */
LOOM_API LoomResult loom_runtime_destroy(LoomRuntime runtime);

typedef struct LoomRuntimeInfo {
  uint32_t struct_size; /* sizeof(LoomRuntimeInfo), set by the caller */
  LoomArch arch;
  char device_name[256];
  uint32_t frames_in_flight;
} LoomRuntimeInfo;
LOOM_API LoomResult loom_runtime_get_info(LoomRuntime runtime, LoomRuntimeInfo* out);

/* Device memory the runtime holds in one memory type. Blocks grow with use (the first of a
 * kind is 1 MiB), so a small module reserves a few MiB. */
typedef struct LoomMemoryUsage {
  uint32_t struct_size; /* sizeof(LoomMemoryUsage), set by the caller */
  uint32_t memory_type; /* index into VkPhysicalDeviceMemoryProperties::memoryTypes */
  uint32_t heap;
  VkMemoryPropertyFlags flags;
  uint32_t blocks;   /* VkDeviceMemory allocations */
  uint64_t reserved; /* bytes allocated from the device */
  uint64_t used;     /* bytes in use by resources, staging and argument slots */
} LoomMemoryUsage;
/* Vulkan: with `usages` NULL, sets *count to the number of memory types the runtime uses;
 * otherwise writes at most *count entries and sets *count to the number written. A CPU
 * runtime uses none (*count = 0). */
LOOM_API LoomResult loom_runtime_get_memory_usage(LoomRuntime runtime, uint32_t* count,
                                                  LoomMemoryUsage* usages);
/* Vulkan: the budget of memory heap `heap` (an index into VkPhysicalDeviceMemoryProperties::
 * memoryHeaps, as in LoomMemoryUsage::heap) and the process's usage of it now, when the engine
 * enabled VK_EXT_memory_budget; both 0 when unknown. */
LOOM_API LoomResult loom_runtime_get_heap_budget(LoomRuntime runtime, uint32_t heap,
                                                 uint64_t* budget, uint64_t* usage);

/* Vulkan: the pipeline cache's data (vkGetPipelineCacheData), to store and give back as
 * LoomVulkanDeviceImport::pipeline_cache_data next run. With `data` NULL, sets *size to the
 * bytes needed; otherwise writes at most *size bytes and sets *size to the bytes written
 * (LOOM_ERROR_INVALID_ARGUMENT when *size is too small: the data is whole or nothing). */
LOOM_API LoomResult loom_runtime_get_pipeline_cache_data(LoomRuntime runtime, size_t* size,
                                                         void* data);

/* The host's frame loop (Vulkan). Call at the start of every frame, after waiting for the
 * fence of the frame begun frames_in_flight calls earlier: what loom_launch_into recorded
 * then (argument slots, descriptor sets) is reused, and destroyed modules that frames
 * still in flight used are freed. A no-op on the CPU. */
LOOM_API LoomResult loom_runtime_begin_frame(LoomRuntime runtime);
/* The same for engines that number their frames and know which have completed (Unity:
 * UnityVulkanRecordingState::currentFrameNumber and safeFrameNumber; Unreal: a fence per
 * frame): `frame` is the frame beginning (greater than the last one given), and every frame
 * up to `completed_frame` (less than `frame`, never less than before) has completed on the GPU.
 * Use this or loom_runtime_begin_frame for a runtime, not both (LOOM_ERROR_INVALID_ARGUMENT
 * for numbers that go back). */
LOOM_API LoomResult loom_runtime_begin_frame_number(LoomRuntime runtime, uint64_t frame,
                                                    uint64_t completed_frame);
/* Makes Loom's writes recorded into `command_buffer` so far visible to the host's vertex
 * input, vertex and fragment shaders and transfers. */
LOOM_API LoomResult loom_runtime_barrier_for_graphics(LoomRuntime runtime,
                                                      VkCommandBuffer command_buffer);
/* The same for any reader: Loom's shader and transfer writes recorded so far, made visible to
 * `dst_stages` with `dst_access` (an engine's compute pass: VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
 * and VK_ACCESS_SHADER_READ_BIT; ray tracing; a copy). */
LOOM_API LoomResult loom_runtime_barrier(LoomRuntime runtime, VkCommandBuffer command_buffer,
                                         VkPipelineStageFlags dst_stages, VkAccessFlags dst_access);
/* Records the work Loom has pending into `command_buffer` (a primary command buffer of the
 * frame, as for loom_launch_into): with LOOM_QUEUE_ENGINE_OWNED, uploads of what the host
 * wrote, image layouts (an exported image is in GENERAL once this ran), loom_launch calls and a
 * reload's copies; otherwise it submits them to the queue ahead of the command buffer.
 * loom_launch_into and loom_array_read_into do it too; call it when the engine uses Loom's
 * resources in a frame without launching anything. */
LOOM_API LoomResult loom_runtime_record(LoomRuntime runtime, VkCommandBuffer command_buffer);

typedef struct LoomSemaphore {
  VkSemaphore semaphore;
  uint64_t value; /* timeline semaphores: the value; binary: 0 */
} LoomSemaphore;
/* Submits what was launched on Loom's queue so far, after the host's `waits`, signalling
 * the host's `signals` when it completes. No host wait. LOOM_ERROR_NOT_SUPPORTED when the
 * engine owns the queue (LOOM_QUEUE_ENGINE_OWNED): loom_runtime_record instead. */
LOOM_API LoomResult loom_runtime_submit(LoomRuntime runtime, uint32_t wait_count,
                                        const LoomSemaphore* waits, uint32_t signal_count,
                                        const LoomSemaphore* signals);
/* Waits until the runtime's own submitted and recorded work is done (not the whole device;
 * command buffers the host submits are the host's to wait for). With
 * LOOM_QUEUE_ENGINE_OWNED: a success when that work ran in frames the engine completed,
 * LOOM_ERROR_NOT_SUPPORTED otherwise (Loom never waits for the engine's queue). */
LOOM_API LoomResult loom_runtime_wait(LoomRuntime runtime);

/* ---- modules --------------------------------------------------------------------------- */

/* A module archive, a module folder, or (with libloom_compiler.so beside libloom) a graph
 * document *.loom.json compiled for the runtime's device. Checks the device has what the
 * module needs, loads every kernel and allocates the module's resources (zeroed; argpacks
 * at their declared values). */
LOOM_API LoomResult loom_module_load(LoomRuntime runtime, const char* path, LoomModule* out);
/* A module archive in memory (copied; `name` appears in errors, may be NULL). */
LOOM_API LoomResult loom_module_load_memory(LoomRuntime runtime, const void* data, size_t size,
                                            const char* name, LoomModule* out);
/* Frees the module when the work that uses it is done: at once on the CPU and on Loom's
 * queue (after waiting for it), after frames_in_flight loom_runtime_begin_frame calls for
 * command buffers the host recorded. Its handles (kernels, pipelines, arrays, textures,
 * argpacks, created packs included) become invalid now (LOOM_ERROR_INVALID_HANDLE).
 * LOOM_ERROR_IN_USE, destroying nothing, while a pack of another module refers to one of
 * its ndarrays, textures or packs. */
LOOM_API LoomResult loom_module_destroy(LoomModule module);

typedef struct LoomModuleInfo {
  uint32_t struct_size; /* sizeof(LoomModuleInfo), set by the caller */
  LoomArch arch;
  uint32_t format_version; /* the module's: 1, or 2 where it needs a runtime that reads 2 */
  uint32_t kernel_count, pipeline_count;
  uint32_t field_count, ndarray_count, texture_count, argpack_count;
  uint64_t generation; /* 0 when loaded, +1 for every reload that swapped it */
  char name[128];
  /* CPU modules: the CPU level running ("x86-64-v3"), the best of the module's levels this
   * CPU has or the one LOOM_CPU_LEVEL forces; "" for Vulkan modules. */
  char cpu_level[64];
} LoomModuleInfo;
LOOM_API LoomResult loom_module_get_info(LoomModule module, LoomModuleInfo* out);
/* Names by index, in metadata order: kernels (`index` < kernel_count, "name" only),
 * pipelines, and the module's resources (fields, ndarrays, textures, argpacks). Static until
 * the next reload. */
typedef enum LoomModuleItem {
  LOOM_ITEM_KERNEL = 1,
  LOOM_ITEM_PIPELINE,
  LOOM_ITEM_FIELD,
  LOOM_ITEM_NDARRAY,
  LOOM_ITEM_TEXTURE,
  LOOM_ITEM_ARGPACK
} LoomModuleItem;
LOOM_API LoomResult loom_module_get_item_name(LoomModule module, LoomModuleItem item,
                                              uint32_t index, const char** name);

/* ---- hot reload ------------------------------------------------------------------------ */

typedef enum LoomReloadStatus {
  LOOM_RELOAD_UNCHANGED =
      0, /* the file's time and size did not change since it was loaded or last tried */
  LOOM_RELOAD_SWAPPED = 1 /* the new module runs now: re-export Vulkan handles of its resources */
} LoomReloadStatus;

/* At a frame boundary: when the module's file changed since it was loaded (or last tried),
 * loads it again and swaps it in. State carries over: every field, ndarray and texture of
 * the new module whose name, element type and shape match one of the old keeps its
 * contents, argpacks of an unchanged layout keep their values (resource members are those
 * of the new module), and the handles the host holds refer to the new module's kernels,
 * pipelines and resources. Pack members the host set to the module's ndarrays, textures or
 * packs (in packs of any module) refer to the new module's from then on; a new module
 * whose ndarray or texture of that name has other dimensions fails. A reload that fails
 * (unreadable or corrupt file, a kernel or
 * resource the host holds missing or of another signature, the device lacking a capability)
 * keeps the old module running and returns the error; the same file is not tried again
 * until it changes. Carrying state never waits with LOOM_QUEUE_ENGINE_OWNED: fields, ndarrays
 * and textures are copied on the device by commands that run in the next command buffer Loom
 * records into (loom_runtime_record, loom_launch_into), and the old module is freed once
 * that frame completed. With LOOM_QUEUE_SHARED, when the host's command buffers used the old
 * module, a swap first waits for the shared queue (once; it reads the old state). Modules
 * loaded from memory report LOOM_RELOAD_UNCHANGED. */
LOOM_API LoomResult loom_module_reload_if_changed(LoomModule module, LoomReloadStatus* status);
/* The same, whether or not the file changed. */
LOOM_API LoomResult loom_module_reload(LoomModule module, LoomReloadStatus* status);
/* Argpack members the last reload that swapped the module reset: members the host set with
 * loom_argpack_set in the module's own argpacks whose layout the new module changed, which
 * start at the new module's declared values (the reload also warns through the log callback,
 * naming module, pack and members). `index` from 0; *pack_member_path is "pack.member"
 * ("params.gain"), valid until the next reload. LOOM_ERROR_NOT_FOUND past the last (at 0: the
 * last reload reset nothing the host set). */
LOOM_API LoomResult loom_module_get_reload_reset(LoomModule module, uint32_t index,
                                                 const char** pack_member_path);

/* ---- kernels and pipelines ------------------------------------------------------------- */

typedef enum LoomTemplateKind {
  LOOM_TEMPLATE_INT = 1,
  LOOM_TEMPLATE_FLOAT,
  LOOM_TEMPLATE_BOOL,
  LOOM_TEMPLATE_FIELD,
  LOOM_TEMPLATE_NDARRAY
} LoomTemplateKind;
/* One template argument of an instantiation: parameter `name` = value. */
typedef struct LoomTemplateArgument {
  const char* name;
  LoomTemplateKind kind;
  int64_t i;           /* INT; BOOL (0/1) */
  double f;            /* FLOAT */
  const char* field;   /* FIELD: the field's name */
  LoomDataType dtype;  /* NDARRAY: element scalar type, */
  uint32_t components; /*   scalars per element */
  uint32_t ndim;       /*   and dimensions */
} LoomTemplateArgument;

/* The kernel `name` (template kernels: the instantiation for exactly these arguments).
 * LOOM_ERROR_NOT_FOUND lists the instantiations the module has. */
LOOM_API LoomResult loom_module_get_kernel(LoomModule module, const char* name,
                                           uint32_t template_arg_count,
                                           const LoomTemplateArgument* template_args,
                                           LoomKernel* out);
LOOM_API LoomResult loom_module_get_pipeline(LoomModule module, const char* name,
                                             LoomPipeline* out);

typedef enum LoomParamKind {
  LOOM_PARAM_VALUE = 1,
  LOOM_PARAM_NDARRAY,
  LOOM_PARAM_TEXTURE,
  LOOM_PARAM_ARGPACK
} LoomParamKind;
typedef struct LoomParamInfo {
  uint32_t struct_size; /* sizeof(LoomParamInfo), set by the caller */
  const char* name;
  LoomParamKind kind;
  LoomDataType dtype;  /* VALUE, NDARRAY: element scalar type */
  uint32_t components; /* VALUE, NDARRAY: scalars per element (1, vector length, rows x cols) */
  uint32_t ndim;       /* NDARRAY, TEXTURE */
  const char* argpack_type; /* ARGPACK: the pack's type name */
} LoomParamInfo;
typedef struct LoomKernelInfo {
  uint32_t struct_size; /* sizeof(LoomKernelInfo), set by the caller */
  const char* name;
  uint32_t param_count;
  uint32_t return_count; /* scalar components returned in total */
} LoomKernelInfo;
/* Strings point into the module, valid until the next reload. */
LOOM_API LoomResult loom_kernel_get_info(LoomKernel kernel, LoomKernelInfo* out);
LOOM_API LoomResult loom_kernel_get_param(LoomKernel kernel, uint32_t index, LoomParamInfo* out);

/* What a kernel reads and writes, for render graphs (Unreal's RDG, Unity's RenderGraph,
 * Godot's barriers) that declare a pass's resources before recording it. The compiler finds
 * it in the kernel's final code: an access it removed as dead is not listed. */
typedef enum LoomAccess {
  LOOM_ACCESS_READ = 1,
  LOOM_ACCESS_WRITE = 2,
  LOOM_ACCESS_ATOMIC = 4 /* read-modify-write: declare it as read and write */
} LoomAccess;
typedef enum LoomResourceSource {
  LOOM_RESOURCE_PARAM = 1,  /* an ndarray or texture parameter */
  LOOM_RESOURCE_FIELD,      /* a field of the module */
  LOOM_RESOURCE_PACK_MEMBER /* an ndarray or texture member of an argpack parameter */
} LoomResourceSource;
typedef struct LoomResourceAccess {
  uint32_t struct_size; /* sizeof(LoomResourceAccess), set by the caller */
  const char* name;     /* the parameter, the field, or "pack.member" (the parameter, then the
                           member's path: "job.inner.grid") */
  LoomResourceSource source;
  LoomModuleItem kind; /* LOOM_ITEM_FIELD, LOOM_ITEM_NDARRAY or LOOM_ITEM_TEXTURE */
  uint32_t param;      /* PARAM, PACK_MEMBER: the parameter's index (loom_kernel_get_param);
                          FIELD: UINT32_MAX */
  uint32_t access;     /* LoomAccess bits, never 0 */
} LoomResourceAccess;
/* With `accesses` NULL, sets *count to the number of resources the kernel touches;
 * otherwise writes at most *count entries, in the kernel's resource order, and sets *count
 * to the number written. A resource the kernel never touches is not listed. Modules written
 * before Loom recorded this: LOOM_ERROR_NOT_SUPPORTED (never a guess; compile the module
 * again). Strings point into the module, valid until the next reload. */
LOOM_API LoomResult loom_kernel_get_resource_access(LoomKernel kernel, uint32_t* count,
                                                    LoomResourceAccess* accesses);

/* A kernel argument, or an argpack member's value. */
typedef enum LoomArgumentKind {
  LOOM_ARGUMENT_VALUE = 1,
  LOOM_ARGUMENT_NDARRAY,
  LOOM_ARGUMENT_TEXTURE,
  LOOM_ARGUMENT_ARGPACK
} LoomArgumentKind;
typedef struct LoomArgument {
  LoomArgumentKind kind;
  LoomDataType dtype; /* VALUE: must equal the parameter's scalar type */
  uint32_t count;     /* VALUE: components given (1 for scalars; vectors, matrices column-major) */
  union {
    int32_t i32[LOOM_MAX_COMPONENTS];
    uint32_t u32[LOOM_MAX_COMPONENTS];
    int64_t i64[LOOM_MAX_COMPONENTS];
    uint64_t u64[LOOM_MAX_COMPONENTS];
    float f32[LOOM_MAX_COMPONENTS];
    double f64[LOOM_MAX_COMPONENTS];
    int8_t i8[LOOM_MAX_COMPONENTS];
    int16_t i16[LOOM_MAX_COMPONENTS];
    uint8_t u8[LOOM_MAX_COMPONENTS];
    uint16_t u16[LOOM_MAX_COMPONENTS];
    LoomArray ndarray;
    LoomTexture texture;
    LoomArgpack argpack;
  } value;
} LoomArgument;

static inline LoomArgument loom_arg_i32(int32_t v) {
  LoomArgument a = {LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I32, 1, {{0}}};
  a.value.i32[0] = v;
  return a;
}
static inline LoomArgument loom_arg_u32(uint32_t v) {
  LoomArgument a = {LOOM_ARGUMENT_VALUE, LOOM_DTYPE_U32, 1, {{0}}};
  a.value.u32[0] = v;
  return a;
}
static inline LoomArgument loom_arg_i64(int64_t v) {
  LoomArgument a = {LOOM_ARGUMENT_VALUE, LOOM_DTYPE_I64, 1, {{0}}};
  a.value.i64[0] = v;
  return a;
}
static inline LoomArgument loom_arg_f32(float v) {
  LoomArgument a = {LOOM_ARGUMENT_VALUE, LOOM_DTYPE_F32, 1, {{0}}};
  a.value.f32[0] = v;
  return a;
}
static inline LoomArgument loom_arg_f64(double v) {
  LoomArgument a = {LOOM_ARGUMENT_VALUE, LOOM_DTYPE_F64, 1, {{0}}};
  a.value.f64[0] = v;
  return a;
}
static inline LoomArgument loom_arg_bool(LoomBool v) {
  LoomArgument a = {LOOM_ARGUMENT_VALUE, LOOM_DTYPE_BOOL, 1, {{0}}};
  a.value.i32[0] = v ? 1 : 0;
  return a;
}
static inline LoomArgument loom_arg_f32_vector(uint32_t count, const float* v) {
  LoomArgument a = {LOOM_ARGUMENT_VALUE, LOOM_DTYPE_F32, count, {{0}}};
  for (uint32_t i = 0; i < count && i < LOOM_MAX_COMPONENTS; ++i) a.value.f32[i] = v[i];
  return a;
}
static inline LoomArgument loom_arg_ndarray(LoomArray v) {
  LoomArgument a = {LOOM_ARGUMENT_NDARRAY, (LoomDataType)0, 0, {{0}}};
  a.value.ndarray = v;
  return a;
}
static inline LoomArgument loom_arg_texture(LoomTexture v) {
  LoomArgument a = {LOOM_ARGUMENT_TEXTURE, (LoomDataType)0, 0, {{0}}};
  a.value.texture = v;
  return a;
}
static inline LoomArgument loom_arg_argpack(LoomArgpack v) {
  LoomArgument a = {LOOM_ARGUMENT_ARGPACK, (LoomDataType)0, 0, {{0}}};
  a.value.argpack = v;
  return a;
}

/* Launches with one argument per parameter, in order. CPU: runs now. Vulkan: recorded on
 * Loom's queue, submitted by loom_runtime_submit (or when Loom must); kernels with return
 * values wait for their result. The arguments are checked first (handles, count, kind,
 * dtype, components, ndim, runtime; every ndarray and texture member of a pack argument
 * that the kernel uses must be set, LOOM_ERROR_INVALID_ARGUMENT naming the member
 * otherwise); nothing runs when one is wrong. Extents too: where the code indexes an
 * ndarray (argument or pack member) or field along a dimension with a loop's variable (plus
 * a constant) or a constant, on every iteration, the module records what that needs (say
 * p.b at least as long as the loop over p.a's extent or up to a value parameter) and a
 * launch whose arguments fall short is refused with LOOM_ERROR_INVALID_ARGUMENT naming the
 * kernel, both resources (pack members by path) and both extents. Other accesses (computed
 * or gathered indices, accesses under an if or in a while, struct_for, textures) are the
 * host's to get right; modules compiled with --debug check every access in the code
 * (LOOM_ERROR_LAUNCH) and record nothing to check at launch, and modules written before
 * Loom recorded extents are not checked. */
LOOM_API LoomResult loom_launch(LoomKernel kernel, uint32_t arg_count, const LoomArgument* args);
/* Gradients (docs/autodiff.md, "Gradients without the compiler"). A module may hold the
 * adjoint "K.grad" and the tangent kernel "K.dual" of a kernel K of its document (those its
 * pipelines launch, and those `loom compile --kernel K.grad` adds), found with
 * loom_module_get_kernel by that name and K's template arguments. The companions of what
 * needs them, "xs.grad" / "xs.dual" and "loss.grad", are module arrays like any other
 * (loom_module_get_array), zeroed at load; adjoints accumulate, so zero them (or the seed)
 * between steps, with a kernel of the document or loom_array_write.
 * - Parameters: K's, then the twins, each named after its parameter ("x.grad" for the
 *   ndarray parameter x; a tangent kernel's also "w.dual" for each float value parameter w,
 *   the direction along w, and "p.dual" for an argpack parameter p when the module was
 *   compiled with one: an argpack of p's type whose members are the directions along p's),
 *   and "p.inner.vel.grad" / ".dual" for each float ndarray member of an argpack parameter p
 *   that K reads or writes (by member path), an ndarray of the member's element type and
 *   dimensions. loom_kernel_get_param lists them. An adjoint in a module compiled with
 *   --debug checks the global data access rule across loops with shadows of what it reads,
 *   which the module makes and binds itself: they are not parameters the host gives or sees.
 * - loom_launch takes every argument, twins included, or K's arguments only (as many as
 *   K's param_count, in K's order): then each ndarray twin is bound to the companion of the module
 *   ndarray given for its parameter (x given "xs": x.grad is "xs.grad") or held by the argpack
 *   member it twins, and each value twin to 0; an argpack twin has no default
 *   (LOOM_ERROR_INVALID_ARGUMENT). An ndarray the engine made has no companion
 *   (LOOM_ERROR_INVALID_ARGUMENT), nor one whose companion the module lacks
 *   (LOOM_ERROR_NOT_FOUND): give every argument then. A twin's ndarray must have the shape of
 *   its parameter's, or of the ndarray the member holds (LOOM_ERROR_INVALID_ARGUMENT).
 * - An adjoint returns the gradients of K's float value parameters, each named by its
 *   parameter: loom_kernel_get_return_named(k, "w", LOOM_DTYPE_F32, 1, &dw), and of the
 *   float members of its argpack parameters, named by parameter and member path
 *   ("p.wind", "p.shape.k"), each at its parameter's place in parameter order. A tangent
 *   kernel returns what K returns. Like any kernel with return values, such an adjoint is
 *   refused by loom_launch_into and, with LOOM_QUEUE_ENGINE_OWNED, by loom_launch; an
 *   adjoint of a kernel without float value parameters returns nothing.
 * - Pipelines that launch K.grad run as any pipeline (loom_pipeline_launch); their twins
 *   are bound in the module, and loom_pipeline_launch_with may give them by name ("x.grad"). */
/* Vulkan: records the launch into `command_buffer`, a primary command buffer of the
 * runtime's queue family that the host has begun and submits in this frame, outside a
 * render pass. Kernels with return values are refused (LOOM_ERROR_NOT_SUPPORTED). What Loom
 * records leaves the command buffer's compute pipeline, compute descriptor set 0 and push
 * constants bound to Loom's (and, after Loom's pending work ran inside it with
 * LOOM_QUEUE_ENGINE_OWNED, every bound state undefined, as vkCmdExecuteCommands does): rebind
 * the engine's own before its next dispatch or draw. The same holds for every call that
 * records into the engine's command buffer (loom_pipeline_launch_into, loom_runtime_record,
 * loom_array_read_into, the barriers). */
LOOM_API LoomResult loom_launch_into(LoomKernel kernel, VkCommandBuffer command_buffer,
                                     uint32_t arg_count, const LoomArgument* args);
/* Component `index` of the flattened return values of the kernel's last loom_launch, as
 * `dtype` (which must be the return's type). */
LOOM_API LoomResult loom_kernel_get_return(LoomKernel kernel, uint32_t index, LoomDataType dtype,
                                           void* out);
/* Return value `name` of the kernel's last loom_launch: its `count` components (exactly the
 * value's: 1 for a scalar, column-major for vectors and matrices) as `dtype` (the value's
 * scalar type; BOOL: 32-bit 0 or 1), written to `out`. Values are named as the kernel names
 * them; an adjoint kernel's ("K.grad", below) are the gradients of K's float value
 * parameters and argpack members, named by the parameter (and member path). LOOM_ERROR_NOT_FOUND
 * lists the names there are, LOOM_ERROR_WRONG_DTYPE says the value's type. */
LOOM_API LoomResult loom_kernel_get_return_named(LoomKernel kernel, const char* name,
                                                 LoomDataType dtype, uint32_t count, void* out);

/* A pipeline's launches, in order, with the arguments the module bound. */
LOOM_API LoomResult loom_pipeline_launch(LoomPipeline pipeline);
LOOM_API LoomResult loom_pipeline_launch_into(LoomPipeline pipeline,
                                              VkCommandBuffer command_buffer);

/* Pipelines given arguments at launch, as Taichi's compute graphs bind their symbolic
 * arguments by name at each run: the engine's own data (an ndarray or texture it made or
 * imported, a pack, a value per frame) in place of what the module bound, without building
 * the module again. An argument goes to every launch whose kernel has a parameter of its
 * name; other parameters, and launches whose kernels lack the name, keep the module's
 * arguments, and later runs without it use the module's again. Every argument is checked
 * against every launch that takes it before anything runs, as loom_launch checks (kind,
 * dtype, components, ndim, texture format, argpack type, unset pack members, handles of
 * another runtime: LOOM_ERROR_WRONG_RUNTIME); the message names the pipeline, the launch's
 * index, its kernel and the parameter. A name no launch takes is LOOM_ERROR_NOT_FOUND listing
 * the names the pipeline takes; a template parameter (compiled into the instantiation the
 * pipeline launches) is LOOM_ERROR_NOT_SUPPORTED; a name given twice is
 * LOOM_ERROR_INVALID_ARGUMENT. A pipeline launches the instantiations the module holds: an
 * ndarray of another element type or dimension count for an open ndarray parameter (one
 * instantiation per type) is refused (LOOM_ERROR_WRONG_DTYPE, LOOM_ERROR_WRONG_NDIM) saying
 * so. Where the launches run: as loom_pipeline_launch and loom_pipeline_launch_into. */
typedef struct LoomNamedArgument {
  const char* name; /* a parameter name of the pipeline (loom_pipeline_get_param) */
  LoomArgument value;
} LoomNamedArgument;
LOOM_API LoomResult loom_pipeline_launch_with(LoomPipeline pipeline, uint32_t count,
                                              const LoomNamedArgument* args);
LOOM_API LoomResult loom_pipeline_launch_into_with(LoomPipeline pipeline,
                                                   VkCommandBuffer command_buffer, uint32_t count,
                                                   const LoomNamedArgument* args);

/* The parameter names a pipeline takes arguments for, in the order its launches first take
 * them, each described as the first launch that takes it has it (another launch whose kernel
 * gives the name another type refuses what the first takes). Strings point into the module,
 * valid until the next reload. */
typedef struct LoomPipelineParamInfo {
  uint32_t struct_size; /* sizeof(LoomPipelineParamInfo), set by the caller */
  const char* name;
  LoomParamKind kind;
  LoomDataType dtype;       /* VALUE, NDARRAY: element scalar type */
  uint32_t components;      /* VALUE, NDARRAY: scalars per element */
  uint32_t ndim;            /* NDARRAY, TEXTURE */
  const char* argpack_type; /* ARGPACK: the pack's type name */
  uint32_t launch_count;    /* launches of the pipeline that take it */
  uint32_t first_launch;    /* the index of the first of them */
  /* NDARRAY, TEXTURE, ARGPACK: LoomAccess bits over every launch that takes it (an argpack:
   * over its ndarray and texture members), what a render graph declares for the resource
   * bound to it; access_known false for modules written before Loom recorded access. */
  uint32_t access;
  LoomBool access_known;
} LoomPipelineParamInfo;
LOOM_API LoomResult loom_pipeline_get_param_count(LoomPipeline pipeline, uint32_t* count);
/* Parameter `index` (< the count). */
LOOM_API LoomResult loom_pipeline_get_param(LoomPipeline pipeline, uint32_t index,
                                            LoomPipelineParamInfo* out);

/* ---- arrays: module fields and ndarrays ------------------------------------------------ */

typedef struct LoomArrayInfo {
  uint32_t struct_size; /* sizeof(LoomArrayInfo), set by the caller */
  LoomBool is_field;    /* a field of a module (not a kernel argument) */
  LoomDataType dtype;
  uint32_t components; /* scalars per element, interleaved (fields may also be "soa") */
  LoomBool soa;        /* fields: component-major layout */
  uint32_t ndim;       /* 0 for a 0-d field (shape []): one element, no extents */
  int64_t shape[LOOM_MAX_DIMS];
  uint64_t bytes;
  LoomBool host_copy; /* false: the host's VkBuffer, reached only through Vulkan */
} LoomArrayInfo;

/* A module's field or ndarray by name. */
LOOM_API LoomResult loom_module_get_array(LoomModule module, const char* name, LoomArray* out);
/* An ndarray of the runtime, zeroed: `ndim` extents, elements of `components` scalars. */
LOOM_API LoomResult loom_ndarray_create(LoomRuntime runtime, LoomDataType dtype,
                                        uint32_t components, uint32_t ndim, const int64_t* shape,
                                        LoomArray* out);
/* The host's buffer as an ndarray (Vulkan): made with STORAGE_BUFFER (and TRANSFER_SRC/DST
 * for loom_array_read/write) usage, `offset` a multiple of minStorageBufferOffsetAlignment,
 * at least the array's bytes long. Never destroyed by Loom. */
typedef struct LoomVulkanBuffer {
  VkBuffer buffer;
  VkDeviceSize offset;
  VkDeviceSize size;
} LoomVulkanBuffer;
LOOM_API LoomResult loom_ndarray_import_vulkan(LoomRuntime runtime, const LoomVulkanBuffer* buffer,
                                               LoomDataType dtype, uint32_t components,
                                               uint32_t ndim, const int64_t* shape, LoomArray* out);
/* An imported ndarray moves to another of the host's buffers (an engine that recreated or
 * renamed the resource): the same requirements as the import, at least the ndarray's bytes.
 * The handle, its shape and every argpack member set to it stay; launches recorded from now
 * on use the new buffer, what was recorded before keeps the old one (the host frees it once
 * those frames completed). LOOM_ERROR_INVALID_ARGUMENT for Loom's own ndarrays. */
LOOM_API LoomResult loom_ndarray_rebind_vulkan(LoomArray array, const LoomVulkanBuffer* buffer);
/* Ndarrays only (fields go with their module). The work that uses it must be done.
 * LOOM_ERROR_IN_USE, destroying nothing, while an argpack member refers to it (the message
 * names the pack and the member): set the member to another ndarray or destroy the pack
 * first. Null is a no-op success; a destroyed handle is LOOM_ERROR_INVALID_HANDLE. */
LOOM_API LoomResult loom_ndarray_destroy(LoomArray array);

LOOM_API LoomResult loom_array_get_info(LoomArray array, LoomArrayInfo* out);
/* Copies `bytes` (exactly the array's size) out of / into the array. A read waits for the
 * work that writes the array; a write reaches the device before the next launch. With
 * LOOM_QUEUE_ENGINE_OWNED a read that would wait (the device changed the array since the host
 * last had it, or the array is the host's VkBuffer) is LOOM_ERROR_NOT_SUPPORTED: record it
 * with loom_array_read_into. */
LOOM_API LoomResult loom_array_read(LoomArray array, void* dst, uint64_t bytes);
LOOM_API LoomResult loom_array_write(LoomArray array, const void* src, uint64_t bytes);
/* The device buffer holding the array (Vulkan), for the host to bind (Loom's buffers can
 * be bound as storage, vertex, index and indirect buffers). */
LOOM_API LoomResult loom_array_export_vulkan(LoomArray array, LoomVulkanBuffer* out);

/* Reads recorded into an engine's command buffer (Vulkan; any LoomQueueMode): the array's or
 * texture's contents as of that point of `command_buffer` (a primary command buffer of the
 * frame, as for loom_launch_into), copied into host-visible memory once the frame completes.
 * Poll with loom_readback_get, or give `done`: loom_runtime_begin_frame calls it (on its
 * thread) with the data once the frame that recorded the read has completed. `out` may be
 * NULL when `done` is given: Loom then frees the readback after calling `done`; otherwise the
 * host frees it with loom_readback_destroy (before or after it landed). Textures the host
 * keeps in SHADER_READ_ONLY_OPTIMAL cannot be read this way (LOOM_ERROR_NOT_SUPPORTED). */
typedef void (*LoomReadbackFn)(void* user, const void* data, uint64_t bytes);
LOOM_API LoomResult loom_array_read_into(LoomArray array, VkCommandBuffer command_buffer,
                                         LoomReadbackFn done, void* user, LoomReadback* out);
LOOM_API LoomResult loom_texture_read_into(LoomTexture texture, VkCommandBuffer command_buffer,
                                           LoomReadbackFn done, void* user, LoomReadback* out);
/* Copies the read-back bytes (`bytes`: exactly the array's or texture's size) to `dst`;
 * LOOM_ERROR_NOT_READY, writing nothing, until the frame that recorded it has completed
 * (frames_in_flight loom_runtime_begin_frame calls later). */
LOOM_API LoomResult loom_readback_get(LoomReadback readback, void* dst, uint64_t bytes);
/* Null is a no-op success. A readback still in flight is freed once its frame completes. */
LOOM_API LoomResult loom_readback_destroy(LoomReadback readback);

/* ---- textures -------------------------------------------------------------------------- */

typedef struct LoomTextureInfo {
  uint32_t struct_size; /* sizeof(LoomTextureInfo), set by the caller */
  LoomTextureFormat format;
  uint32_t ndim; /* 2 or 3 */
  uint32_t width, height, depth;
  LoomBool host_copy;
} LoomTextureInfo;

LOOM_API LoomResult loom_module_get_texture(LoomModule module, const char* name, LoomTexture* out);
/* depth 0 makes a 2-d texture. */
LOOM_API LoomResult loom_texture_create(LoomRuntime runtime, LoomTextureFormat format,
                                        uint32_t width, uint32_t height, uint32_t depth,
                                        LoomTexture* out);
/* The host's image (Vulkan): format R32_SFLOAT, R32G32_SFLOAT, R32G32B32A32_SFLOAT or
 * R8G8B8A8_UNORM with STORAGE (and SAMPLED) usage, kept in `layout` whenever Loom's work
 * runs (GENERAL, or SHADER_READ_ONLY_OPTIMAL for images kernels only sample). Another format
 * is LOOM_ERROR_WRONG_DTYPE, another layout LOOM_ERROR_INVALID_ARGUMENT. */
typedef struct LoomVulkanImage {
  VkImage image;
  VkImageView view;
  VkFormat format;
  VkExtent3D extent;
  VkImageLayout layout;
  uint32_t ndim; /* 2 or 3 */
} LoomVulkanImage;
LOOM_API LoomResult loom_texture_import_vulkan(LoomRuntime runtime, const LoomVulkanImage* image,
                                               LoomTexture* out);
/* Textures of the runtime (a module's go with it). As loom_ndarray_destroy:
 * LOOM_ERROR_IN_USE while an argpack member refers to it. */
LOOM_API LoomResult loom_texture_destroy(LoomTexture texture);
LOOM_API LoomResult loom_texture_get_info(LoomTexture texture, LoomTextureInfo* out);
/* Texels row-major, x fastest, channels interleaved (f32, or u8 for RGBA8). Textures with
 * a host copy only. */
LOOM_API LoomResult loom_texture_read(LoomTexture texture, void* dst, uint64_t bytes);
LOOM_API LoomResult loom_texture_write(LoomTexture texture, const void* src, uint64_t bytes);
/* The image and a view of all of it. Loom's images have STORAGE, SAMPLED and TRANSFER usage
 * and stay in VK_IMAGE_LAYOUT_GENERAL; imported images come back as the host gave them. */
LOOM_API LoomResult loom_texture_export_vulkan(LoomTexture texture, LoomVulkanImage* out);

/* ---- argpacks -------------------------------------------------------------------------- */

/* A module's argpack instance by name, or a new pack of one of its argpack types (members
 * zero). A created pack belongs to the module and goes with it. */
LOOM_API LoomResult loom_module_get_argpack(LoomModule module, const char* name, LoomArgpack* out);
LOOM_API LoomResult loom_argpack_create(LoomModule module, const char* type_name, LoomArgpack* out);

/* The layout of a module's argpack or struct type, for engines that fill packs in their own
 * uniform buffers or describe them to a render graph: std140 offsets as a kernel reads them. */
typedef enum LoomMemberKind {
  LOOM_MEMBER_VALUE = 1, /* dtype, rows x cols components */
  LOOM_MEMBER_STRUCT,    /* nested_type: a struct type, stored inline */
  LOOM_MEMBER_PACK,      /* nested_type: a pack bound by reference */
  LOOM_MEMBER_NDARRAY,   /* dtype and ndim of the ndarray it holds */
  LOOM_MEMBER_TEXTURE    /* ndim and format of the texture it holds */
} LoomMemberKind;
typedef struct LoomArgpackMemberInfo {
  uint32_t struct_size; /* sizeof(LoomArgpackMemberInfo), set by the caller */
  char name[128];
  LoomMemberKind kind;
  LoomDataType dtype;       /* VALUE, NDARRAY: the scalar type */
  uint32_t rows, cols;      /* VALUE: 1 x 1 scalar, rows x 1 vector, rows x cols matrix */
  uint32_t ndim;            /* NDARRAY, TEXTURE */
  LoomTextureFormat format; /* TEXTURE */
  char nested_type[128];    /* STRUCT, PACK: the type's name (loom_module_get_argpack_type) */
  uint32_t offset;          /* bytes from the start of the pack */
} LoomArgpackMemberInfo;
/* Packs' and structs' types by name: their size in bytes and member count. */
LOOM_API LoomResult loom_module_get_argpack_type(LoomModule module, const char* type_name,
                                                 uint32_t* size, uint32_t* member_count);
/* Member `index` (< member_count) of a type, in declaration order. */
LOOM_API LoomResult loom_module_get_argpack_member(LoomModule module, const char* type_name,
                                                   uint32_t index, LoomArgpackMemberInfo* out);
/* Created packs only. LOOM_ERROR_IN_USE while another pack binds it as a nested member.
 * What it referred to is released. */
LOOM_API LoomResult loom_argpack_destroy(LoomArgpack pack);
/* Member `path` ("material.roughness", "grid.cells"): a value (dtype and count as the
 * member's), an ndarray, a texture, or another pack bound by reference (nested packs) or
 * copied (struct members). The pack refers to the ndarray, texture or nested pack it is
 * given, which cannot be destroyed (LOOM_ERROR_IN_USE) until the member is set to another
 * one or the pack is destroyed; setting the member releases the one it held before. A
 * struct member copied from a pack refers to what that pack referred to. Handles of
 * another runtime are LOOM_ERROR_WRONG_RUNTIME. */
LOOM_API LoomResult loom_argpack_set(LoomArgpack pack, const char* path, const LoomArgument* value);
/* Value members: dtype and count filled from the member. */
LOOM_API LoomResult loom_argpack_get(LoomArgpack pack, const char* path, LoomArgument* out);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_H_ */
