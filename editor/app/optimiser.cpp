#include "editor/app/optimiser.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
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

// A tunable name: a value ("target", "world.wind") and, for a vector or matrix, one of its
// components, column-major ("target[1]"), as the tape names their gradients.
struct ValueName {
  std::string base;
  int component = -1;  // -1: a scalar
};

ValueName split_component(const std::string& name) {
  size_t open = name.rfind('[');
  if (open == std::string::npos || name.back() != ']') return {name, -1};
  std::string digits = name.substr(open + 1, name.size() - open - 2);
  if (digits.empty() || digits.size() > 2 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return {name, -1};  // not a component: a name no tunable value has
  return {name.substr(0, open), std::stoi(digits)};
}

std::string component_name(const std::string& base, ValueType type, int k) {
  return type.is_scalar() ? base : base + "[" + std::to_string(k) + "]";
}

// The components a document gives an argpack member: its value, a scalar given for a vector
// splatted, zeros where it gives none (as the pack starts).
std::vector<double> member_components(const graph::Document& doc, const MemberValue& m) {
  std::vector<double> out(static_cast<size_t>(m.type.components()), 0.0);
  const graph::ArgpackDecl* decl = doc.argpack(m.pack);
  if (!decl) return out;
  for (const auto& [path, literal] : decl->values) {
    if (path != m.path) continue;
    std::vector<double> given = literal_components(literal);
    if (given.size() == 1) given.assign(out.size(), given[0]);
    for (size_t k = 0; k < out.size() && k < given.size(); ++k) out[k] = given[k];
  }
  return out;
}

// The float value parameters the launches pass, a component at a time. A parameter is
// passed whole to every launch that takes it, so when its launches pass different values (in
// any component) or types, none of its components can be tuned.
std::vector<TunableValue> tunable_launch_values(const graph::Document& doc) {
  struct Passed {
    LaunchValue first;
    std::vector<std::string> launches;
    std::string problem;
  };
  std::vector<Passed> params;
  for (const LaunchValue& v : launch_values(doc)) {
    if (!optimised_pipeline(v.pipeline) || !is_float(v.type.scalar)) continue;
    std::string where = v.pipeline + " " + std::to_string(v.launch + 1) + ". " + v.kernel;
    auto same = std::find_if(params.begin(), params.end(),
                             [&](const Passed& p) { return p.first.param == v.param; });
    if (same == params.end()) {
      params.push_back({v, {where}, ""});
      continue;
    }
    same->launches.push_back(where);
    bool differs = v.type != same->first.type || v.components != same->first.components;
    if (differs && same->problem.empty())
      same->problem = "its launches pass different values (" + same->launches.front() + ", " +
                      where + "): the gradient sums over them, so make them equal first";
  }
  std::vector<TunableValue> out;
  for (const Passed& p : params)
    for (int k = 0; k < p.first.type.components(); ++k) {
      auto at = static_cast<size_t>(k);
      out.push_back({component_name(p.first.param, p.first.type, k),
                     at < p.first.components.size() ? p.first.components[at] : 0.0, p.launches,
                     p.problem});
    }
  return out;
}

// The argpacks the optimised pipelines' launches pass, each with where.
std::vector<std::pair<std::string, std::vector<std::string>>> passed_argpacks(
    const graph::Document& doc) {
  std::vector<std::pair<std::string, std::vector<std::string>>> passed;
  for (const graph::Pipeline& p : doc.pipelines) {
    if (!optimised_pipeline(p.name)) continue;
    for (size_t l = 0; l < p.launches.size(); ++l)
      for (const auto& [name, literal] : p.launches[l].args) {
        const graph::KernelParam* param = param_of(doc, p.launches[l].kernel, name);
        if (!param || param->kind != graph::ParamKind::Argpack ||
            literal.kind != graph::Literal::Kind::String)
          continue;
        const std::string& pack = literal.s;
        auto it = std::find_if(passed.begin(), passed.end(),
                               [&](const auto& e) { return e.first == pack; });
        if (it == passed.end()) it = passed.insert(passed.end(), {pack, {}});
        it->second.push_back(p.name + " " + std::to_string(l + 1) + ". " + p.launches[l].kernel);
      }
  }
  return passed;
}

// The float members of the argpacks the launches pass (`passed`: passed_argpacks).
std::vector<MemberValue> tuned_members(
    const graph::Document& doc,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& passed) {
  std::vector<MemberValue> out;
  for (const MemberValue& m : argpack_values(doc))
    if (is_float(m.type.scalar) &&
        std::any_of(passed.begin(), passed.end(), [&](const auto& e) { return e.first == m.pack; }))
      out.push_back(m);
  return out;
}

}  // namespace

std::vector<TunableValue> tunable_values(const graph::Document& doc) {
  std::vector<TunableValue> out = tunable_launch_values(doc);
  // Argpack members are tuned in the pack, so every launch that passes it sees one value.
  std::vector<std::pair<std::string, std::vector<std::string>>> passed = passed_argpacks(doc);
  for (const MemberValue& m : tuned_members(doc, passed)) {
    auto where = std::find_if(passed.begin(), passed.end(),
                              [&](const auto& e) { return e.first == m.pack; });
    std::vector<double> start = member_components(doc, m);
    for (int k = 0; k < m.type.components(); ++k)
      out.push_back({component_name(m.pack + "." + m.path, m.type, k),
                     start[static_cast<size_t>(k)], where->second, ""});
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
  for (const auto& [tuned, value] : values) {
    ValueName v = split_component(tuned);
    size_t k = v.component < 0 ? 0 : static_cast<size_t>(v.component);
    const std::pair<std::string, std::string> member = pack_and_path(v.base);
    const std::string& pack = member.first;
    const std::string& path = member.second;
    if (!pack.empty()) {  // an argpack member: in the pack's values
      for (const MemberValue& m : argpack_values(out)) {
        if (m.pack != pack || m.path != path) continue;
        std::vector<double> c = member_components(out, m);
        if (k >= c.size()) continue;
        c[k] = six_digits(value);
        graph::Literal literal = graph::Literal::real(c[0]);
        if (c.size() > 1) {
          std::vector<graph::Literal> items;
          items.reserve(c.size());
          for (double x : c) items.push_back(graph::Literal::real(x));
          literal = graph::Literal::list_of(std::move(items));  // flat, column-major
        }
        for (graph::ArgpackDecl& a : out.argpacks) {
          if (a.name != pack) continue;
          auto at = std::find_if(a.values.begin(), a.values.end(),
                                 [&](const auto& e) { return e.first == path; });
          if (at == a.values.end()) at = a.values.insert(a.values.end(), {path, {}});
          at->second = literal;
        }
      }
      continue;
    }
    for (LaunchValue lv : launch_values(out)) {  // a value parameter: in every launch
      if (!optimised_pipeline(lv.pipeline) || lv.param != v.base || k >= lv.components.size())
        continue;
      lv.components[k] = six_digits(value);
      out = with_launch_value(out, lv);
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
  // Every component of the values tuned, as the document gives them: an iteration passes a
  // whole vector with its tuned components replaced.
  const std::vector<MemberValue> members = tuned_members(doc, passed_argpacks(doc));
  for (const OptimiseSettings::Parameter& p : settings_.parameters) {
    std::string base = split_component(p.name).base;
    if (whole_values_.count(base)) continue;
    auto [pack, path] = pack_and_path(base);
    if (!pack.empty()) {
      for (const MemberValue& m : members)
        if (m.pack == pack && m.path == path) whole_values_[base] = member_components(doc, m);
      continue;
    }
    for (const LaunchValue& lv : launch_values(doc))
      if (lv.param == base && optimised_pipeline(lv.pipeline) && !whole_values_.count(base))
        whole_values_[base] = lv.components;
  }
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
    // The values now, whole: what the document gives, with the tuned components replaced.
    std::map<std::string, std::vector<double>> now = whole_values_;
    for (size_t i = 0; i < values_.size(); ++i) {
      ValueName v = split_component(settings_.parameters[i].name);
      std::vector<double>& c = now[v.base];
      size_t k = v.component < 0 ? 0 : static_cast<size_t>(v.component);
      if (c.size() <= k) c.resize(k + 1, 0.0);
      c[k] = static_cast<float>(values_[i]);
    }
    auto arg = [](const std::vector<double>& c) {
      return c.size() == 1 ? Arg(static_cast<float>(c[0])) : Arg(c);
    };
    // Each pipeline gets the tuned values its launches' kernels take (others are refused);
    // argpack members go into the packs, which every launch passing them reads.
    auto args_for = [&](const std::string& pipeline) {
      std::set<std::string> takes;
      for (const auto& [kernel, args] : program_->pipeline_launches(pipeline))
        for (const auto& [name, value] : args) takes.insert(name);
      Args args;
      for (const auto& [base, c] : now)
        if (pack_and_path(base).first.empty() && takes.count(base)) args.emplace_back(base, arg(c));
      return args;
    };
    for (const auto& [base, c] : now) {
      auto [pack, path] = pack_and_path(base);
      if (!pack.empty()) program_->set_argpack(pack, path, arg(c));
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
