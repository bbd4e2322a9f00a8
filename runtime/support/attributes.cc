// Typed access to Attrs.
#include "dlc/attributes.h"

#include "dlc/error.h"

namespace dlc {

namespace {
template <typename T>
const T& get(const std::map<std::string, AttrValue>& m, const std::string& name) {
  auto it = m.find(name);
  if (it == m.end()) throw Error("missing attribute '" + name + "'");
  if (auto* p = std::get_if<T>(&it->second)) return *p;
  throw Error("attribute '" + name + "' has the wrong type");
}
}  // namespace

int64_t Attrs::i(const std::string& name) const {
  auto it = map_.find(name);
  if (it != map_.end())
    if (auto* d = std::get_if<double>(&it->second)) return int64_t(*d);
  return get<int64_t>(map_, name);
}
int64_t Attrs::i(const std::string& name, int64_t dflt) const { return has(name) ? i(name) : dflt; }
double Attrs::f(const std::string& name) const {
  auto it = map_.find(name);
  if (it != map_.end())
    if (auto* v = std::get_if<int64_t>(&it->second)) return double(*v);
  return get<double>(map_, name);
}
double Attrs::f(const std::string& name, double dflt) const { return has(name) ? f(name) : dflt; }
const std::string& Attrs::s(const std::string& name) const { return get<std::string>(map_, name); }
std::string Attrs::s(const std::string& name, const std::string& dflt) const {
  return has(name) ? s(name) : dflt;
}
const std::vector<int64_t>& Attrs::ints(const std::string& name) const {
  return get<std::vector<int64_t>>(map_, name);
}
std::vector<int64_t> Attrs::ints(const std::string& name, std::vector<int64_t> dflt) const {
  return has(name) ? ints(name) : dflt;
}
std::vector<double> Attrs::floats(const std::string& name) const {
  auto it = map_.find(name);
  if (it != map_.end())
    if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return {v->begin(), v->end()};
  return get<std::vector<double>>(map_, name);
}
const Tensor& Attrs::tensor(const std::string& name) const { return get<Tensor>(map_, name); }

}  // namespace dlc
