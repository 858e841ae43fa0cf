#include "editor/app/optimiser.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "editor/app/panels.h"
#include "engine_plugin/include/loom/tape.h"

namespace loom::editor {

namespace {

bool optimised_pipeline(const std::string& name) {
  return std::any_of(std::begin(kOptimisePipelines), std::end(kOptimisePipelines),
                     [&](const char* p) { return name == p; });
}

const graph::KernelParam* param_of(const graph::Document& doc, const std::string& kernel,
                                   const std::string& name) {
  for (const graph::KernelDecl& k : doc.kernels) {
    if (k.name != kernel) continue;
    for (const graph::KernelParam& p : k.params)
      if (p.name == name) return &p;
  }
  return nullptr;
}

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

double six_digits(double v) { return std::strtod(number_text(v).c_str(), nullptr); }

// An argpack member's tunable name, "world.drag": the argpack, then the member's path.
std::pair<std::string, std::string> pack_and_path(const std::string& name) {
  size_t dot = name.find('.');
  if (dot == std::string::npos) return {};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// The value a document gives an argpack member (0 when it gives none, as the pack starts).
double member_start(const graph::Document& doc, const MemberValue& m) {
  const graph::ArgpackDecl* decl = doc.argpack(m.pack);
  if (!decl) return 0;
  for (const auto& [path, literal] : decl->values) {
    if (path != m.path) continue;
    if (literal.is_number()) return literal.as_double();
    if (literal.kind == graph::Literal::Kind::List && !literal.list.empty() &&
        literal.list[0].is_number())
      return literal.list[0].as_double();
  }
  return 0;
}

// The float value parameters the launches pass.
std::vector<TunableValue> tunable_launch_values(const graph::Document& doc) {
  std::vector<TunableValue> out;
  for (const LaunchValue& v : launch_values(doc)) {
    if (!optimised_pipeline(v.pipeline) || !is_float(v.type.scalar)) continue;
    std::string where = v.pipeline + " " + std::to_string(v.launch + 1) + ". " + v.kernel;
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const TunableValue& t) { return t.name == v.param; });
    if (same == out.end()) {
      TunableValue t;
      t.name = v.param;
      t.value = v.components.empty() ? 0 : v.components[0];
      if (!v.type.is_scalar())
        t.problem = "a " + value_type_name(v.type) + ": only float scalars are tuned";
      t.launches.push_back(where);
      out.push_back(std::move(t));
      continue;
    }
    same->launches.push_back(where);
    bool differs = !v.type.is_scalar() || v.components.empty() || v.components[0] != same->value;
    if (differs && same->problem.empty())
      same->problem = "its launches pass different values (" + same->launches.front() + ", " +
                      where + "): the gradient sums over them, so make them equal first";
  }
  return out;
}

}  // namespace

std::vector<TunableValue> tunable_values(const graph::Document& doc) {
  std::vector<TunableValue> out = tunable_launch_values(doc);
  // The argpacks the launches pass, and where: their float members are tuned in the pack,
  // so every launch that passes it sees the one value.
  std::vector<std::pair<std::string, std::vector<std::string>>> passed;
  for (const graph::Pipeline& p : doc.pipelines) {
    if (!optimised_pipeline(p.name)) continue;
    for (size_t l = 0; l < p.launches.size(); ++l)
      for (const auto& [name, literal] : p.launches[l].args) {
        const graph::KernelParam* param = param_of(doc, p.launches[l].kernel, name);
        if (!param || param->kind != graph::ParamKind::Argpack ||
            literal.kind != graph::Literal::Kind::String)
          continue;
        auto it = std::find_if(passed.begin(), passed.end(),
                               [&](const auto& e) { return e.first == literal.s; });
        if (it == passed.end()) it = passed.insert(passed.end(), {literal.s, {}});
        it->second.push_back(p.name + " " + std::to_string(l + 1) + ". " + p.launches[l].kernel);
      }
  }
  for (const MemberValue& m : argpack_values(doc)) {
    auto it = std::find_if(passed.begin(), passed.end(),
                           [&](const auto& e) { return e.first == m.pack; });
    if (it == passed.end() || !is_float(m.type.scalar)) continue;
    TunableValue t;
    t.name = m.pack + "." + m.path;
    t.value = member_start(doc, m);
    t.launches = it->second;
    if (!m.type.is_scalar())
      t.problem = "a " + value_type_name(m.type) + ": only float scalars are tuned";
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> loss_candidates(const graph::Document& doc) {
  std::vector<std::string> out;
  for (const FieldDesc& f : doc.fields)
    if (f.needs_grad && is_float(f.elem.scalar)) out.push_back(f.name);
  for (const graph::NdarrayDecl& a : doc.ndarrays)
    if (a.needs_grad && is_float(a.elem.scalar)) out.push_back(a.name);
  auto loss = std::find(out.begin(), out.end(), "loss");
  if (loss != out.end()) std::rotate(out.begin(), loss, loss + 1);
  return out;
}

graph::Document with_tuned_values(const graph::Document& doc,
                                  const std::vector<std::pair<std::string, double>>& values) {
  graph::Document out = doc;
  for (const auto& [tuned, value] : values) {  // argpack members: in the pack's values
    auto [pack, path] = pack_and_path(tuned);
    graph::ArgpackDecl* decl = nullptr;
    for (graph::ArgpackDecl& a : out.argpacks)
      if (a.name == pack) decl = &a;
    if (!decl) continue;
    auto at = std::find_if(decl->values.begin(), decl->values.end(),
                           [&](const auto& v) { return v.first == path; });
    if (at == decl->values.end()) at = decl->values.insert(decl->values.end(), {path, {}});
    at->second = graph::Literal::real(six_digits(value));
  }
  for (graph::Pipeline& p : out.pipelines) {
    if (!optimised_pipeline(p.name)) continue;
    for (graph::Launch& l : p.launches)
      for (auto& [name, literal] : l.args)
        for (const auto& [tuned, value] : values) {
          const graph::KernelParam* param = param_of(out, l.kernel, name);
          if (name == tuned && param && param->kind == graph::ParamKind::Value)
            literal = graph::Literal::real(six_digits(value));
        }
  }
  return out;
}

Optimiser::Optimiser(const graph::Document& doc, OptimiseSettings settings)
    : settings_(std::move(settings)) {
  auto fail = [](const std::string& message) { throw Error(Place{}, "optimise: " + message); };
  std::vector<std::string> losses = loss_candidates(doc);
  if (losses.empty())
    fail(
        "the document has no loss: declare a float field or ndarray \"needs_grad\" (the "
        "inspector's gradients row) and write the loss into it");
  if (std::find(losses.begin(), losses.end(), settings_.loss) == losses.end())
    fail("the loss '" + settings_.loss +
         "' is not a float field or ndarray declared needs_grad; the document has: " + [&] {
           std::string s;
           for (const std::string& l : losses) s += (s.empty() ? "" : ", ") + l;
           return s;
         }());
  if (settings_.parameters.empty()) fail("no parameter to tune: tick at least one");
  std::vector<TunableValue> tunable = tunable_values(doc);
  for (const OptimiseSettings::Parameter& p : settings_.parameters) {
    auto t = std::find_if(tunable.begin(), tunable.end(),
                          [&](const TunableValue& v) { return v.name == p.name; });
    if (t == tunable.end())
      fail("'" + p.name + "' is not a float value the init, step or loss pipelines pass");
    if (!t->problem.empty()) fail("'" + p.name + "' cannot be tuned: " + t->problem);
    if (!(p.min <= p.max) || !std::isfinite(p.min) || !std::isfinite(p.max))
      fail("the range of '" + p.name + "' (" + number_text(p.min) + " to " + number_text(p.max) +
           ") is not a range: min must be at most max");
  }
  if (settings_.steps < 0) fail("the steps per iteration must be 0 or more");
  if (settings_.iterations < 1) fail("the iterations must be 1 or more");
  if (!(settings_.step_size > 0) || !std::isfinite(settings_.step_size))
    fail("the step size must be above 0");
  for (const OptimiseSettings::Parameter& p : settings_.parameters)
    values_.push_back(std::clamp(p.start, p.min, p.max));
  m_.assign(values_.size(), 0);
  v_.assign(values_.size(), 0);
  progress_.values = values_;
  ProgramOptions o;
  o.backend = Backend::Cpu;
  o.cancellable = true;  // stop() cancels the launch under way
  o.debug = true;        // an index out of range is an error on its node, as in the editor
  program_ = std::make_unique<Program>(o);
  program_->load(doc);
}

Optimiser::~Optimiser() {
  stop();
  wait();
}

double Optimiser::iterate() {
  try {
    // Each pipeline gets the tuned values its launches' kernels take (others are refused).
    auto args_for = [&](const std::string& pipeline) {
      std::set<std::string> takes;
      for (const auto& [kernel, args] : program_->pipeline_launches(pipeline))
        for (const auto& [name, value] : args) takes.insert(name);
      Args args;
      for (size_t i = 0; i < values_.size(); ++i)
        if (takes.count(settings_.parameters[i].name))
          args.emplace_back(settings_.parameters[i].name, static_cast<float>(values_[i]));
      return args;
    };
    // Argpack members go into the packs, which every launch passing them reads.
    for (size_t i = 0; i < values_.size(); ++i) {
      auto [pack, path] = pack_and_path(settings_.parameters[i].name);
      if (!pack.empty()) program_->set_argpack(pack, path, static_cast<float>(values_[i]));
    }
    TapeOptions options;
    options.loss = settings_.loss;
    options.memory_budget = settings_.memory_budget;
    Tape tape(*program_, options);
    if (program_->has_pipeline("init")) tape.run_pipeline("init", args_for("init"));
    if (program_->has_pipeline("step")) {
      Args step = args_for("step");
      for (int s = 0; s < settings_.steps; ++s) tape.run_pipeline("step", step);
    }
    if (program_->has_pipeline("loss")) tape.run_pipeline("loss", args_for("loss"));
    const TapeReport& r = tape.backward();
    if (!std::isfinite(r.loss))
      throw Error(Place{"", "", -1, settings_.loss},
                  "optimise: the loss '" + settings_.loss + "' is " + number_text(r.loss) +
                      ": a smaller step size or narrower ranges may keep it finite");
    std::vector<double> gradients;
    for (const OptimiseSettings::Parameter& p : settings_.parameters) {
      auto g = std::find_if(r.value_gradients.begin(), r.value_gradients.end(),
                            [&](const auto& e) { return e.first == p.name; });
      gradients.push_back(g == r.value_gradients.end() ? 0.0 : g->second);
    }
    double loss = r.loss;
    update(gradients);
    std::lock_guard<std::mutex> lock(mutex_);
    progress_.losses.push_back(loss);
    progress_.values = values_;
    progress_.gradients = std::move(gradients);
    return loss;
  } catch (const Error& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stop_) progress_.error = e;
    throw;
  } catch (const std::exception& e) {  // on the worker thread: reported, never a crash
    Error error(Place{}, std::string("optimise: ") + e.what());
    std::lock_guard<std::mutex> lock(mutex_);
    progress_.error = error;
    throw error;
  }
}

void Optimiser::update(const std::vector<double>& gradients) {
  constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-12;
  ++t_;
  for (size_t i = 0; i < values_.size(); ++i) {
    const OptimiseSettings::Parameter& p = settings_.parameters[i];
    double g = gradients[i];
    double step = settings_.step_size * g;
    if (settings_.method == OptimiseSettings::Method::Adam) {
      m_[i] = kBeta1 * m_[i] + (1 - kBeta1) * g;
      v_[i] = kBeta2 * v_[i] + (1 - kBeta2) * g * g;
      double m_hat = m_[i] / (1 - std::pow(kBeta1, t_));
      double v_hat = v_[i] / (1 - std::pow(kBeta2, t_));
      step = settings_.step_size * (p.max - p.min) * m_hat / (std::sqrt(v_hat) + kEpsilon);
    }
    if (std::isfinite(step)) values_[i] = std::clamp(values_[i] - step, p.min, p.max);
  }
}

void Optimiser::start() {
  wait();  // a run that ended
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (progress_.done() >= settings_.iterations || progress_.error) return;
    progress_.running = true;
    progress_.stopped = false;
  }
  stop_ = false;
  program_->clear_cancel();
  worker_ = std::thread([this] { run(); });
}

void Optimiser::run() {
  while (!stop_) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (progress_.done() >= settings_.iterations) break;
    }
    try {
      iterate();
    } catch (const Error&) {
      break;  // recorded by iterate() unless stopped
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  progress_.running = false;
  progress_.stopped = stop_ && progress_.done() < settings_.iterations;
}

void Optimiser::stop() {
  stop_ = true;
  if (program_) program_->cancel();
}

void Optimiser::wait() {
  if (worker_.joinable()) worker_.join();
}

OptimiseProgress Optimiser::progress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return progress_;
}

graph::Document Optimiser::tuned(const graph::Document& doc) const {
  OptimiseProgress p = progress();
  std::vector<std::pair<std::string, double>> values;
  for (size_t i = 0; i < settings_.parameters.size(); ++i)
    values.emplace_back(settings_.parameters[i].name, p.values[i]);
  return with_tuned_values(doc, values);
}

}  // namespace loom::editor
