// What an engine made by EngineHost hands a Loom plugin through loom.h: its handles and the API
// version its instance asked for, never its device's create info or enabled features. Tests
// add what their engine hands out besides (get_instance_proc_addr, a pipeline cache, a log).
#pragma once

#include <loom/loom.h>

#include "tests/support/engine_host.h"

namespace loom::testing {

inline LoomVulkanDeviceImport engine_import(const EngineHost& host) {
  LoomVulkanDeviceImport d{};
  d.struct_size = sizeof d;
  d.instance = host.instance();
  d.physical_device = host.physical();
  d.device = host.device();
  d.queue_family_index = host.family();
  d.queue = host.queue();
  d.api_version = host.api_version();
  d.frames_in_flight = 2;
  return d;
}

}  // namespace loom::testing
