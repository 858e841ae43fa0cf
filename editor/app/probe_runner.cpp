#include "editor/app/probe_runner.h"

#include <algorithm>
#include <cstring>

#include "compiler/graph/document_json.h"
#include "editor/model/probe.h"
#include "runtime/common/error.h"

namespace loom::editor {

const ProbeValues& ProbeRunner::run(const graph::Document& doc, Program& live,
                                    const std::string& kernel, const PinRef& pin) {
  result_ = ProbeValues{kernel, pin, {}, {}, {}, {}};
  std::string key =
      graph::program_key(doc) + "\n" + kernel + "\n" + std::to_string(pin.node) + "." + pin.pin;
  try {
    std::string why;
    std::optional<ProbePlan> plan = plan_probe(doc, kernel, pin, &why);
    if (!plan) {
      result_.error = why;
      key_.clear();
      return result_;
    }
    if (key != key_ || !program_) {
      ProgramOptions o;
      o.backend = Backend::Cpu;
      o.offline_cache = false;
      program_ = std::make_unique<Program>(o);
      program_->load(plan->document);
      key_ = key;
    }
    // The live data, as it is now. The probe's program was made from the same document, so
    // every resource has the same bytes; one that differs would make the probe lie.
    auto copy = [](const std::string& name, const uint8_t* from, size_t from_bytes, uint8_t* to,
                   size_t to_bytes) {
      if (from_bytes != to_bytes)
        throw Error("the probe's copy of '" + name + "' does not match the running program's");
      std::memcpy(to, from, from_bytes);
    };
    for (const FieldDesc& f : doc.fields) {
      ArrayView from = live.array(f.name), to = program_->array(f.name);
      copy(f.name, from.data, from.bytes, to.data, to.bytes);
    }
    for (const graph::NdarrayDecl& n : doc.ndarrays) {
      ArrayView from = live.array(n.name), to = program_->array(n.name);
      copy(n.name, from.data, from.bytes, to.data, to.bytes);
    }
    for (const graph::TextureDecl& t : doc.textures) {
      TextureView from = live.texture(t.name), to = program_->texture(t.name);
      copy(t.name, from.data, from.bytes, to.data, to.bytes);
    }
    program_->run_pipeline(kProbePipeline);
    ArrayView out = program_->array(kProbeField);
    result_.type = plan->type;
    result_.shape = out.shape;
    size_t n = out.elements();
    result_.values.reserve(n * static_cast<size_t>(out.components));
    for (size_t e = 0; e < n; ++e)
      for (int c = 0; c < out.components; ++c) result_.values.push_back(out.component(e, c));
  } catch (const Error& e) {
    result_.error = e.what();
    key_.clear();
    program_.reset();
  }
  return result_;
}

}  // namespace loom::editor
