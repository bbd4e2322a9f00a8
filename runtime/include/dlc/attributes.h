// Named attributes of an operation (axis, perm, epsilon, …). The same type serves IR nodes and
// the runtime's kernels, so attributes cross the plan format unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "dlc/tensor.h"

namespace dlc {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, Tensor>;

class Attrs {
 public:
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  void set(const std::string& name, AttrValue v) { map_[name] = std::move(v); }
  void erase(const std::string& name) { map_.erase(name); }
  const std::map<std::string, AttrValue>& all() const { return map_; }
  bool empty() const { return map_.empty(); }
  bool operator==(const Attrs&) const = default;

  // Typed getters; the versions without a default throw dlc::Error naming the attribute.
  int64_t i(const std::string& name) const;
  int64_t i(const std::string& name, int64_t dflt) const;
  double f(const std::string& name) const;
  double f(const std::string& name, double dflt) const;
  const std::string& s(const std::string& name) const;
  std::string s(const std::string& name, const std::string& dflt) const;
  const std::vector<int64_t>& ints(const std::string& name) const;
  std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> dflt) const;
  std::vector<double> floats(const std::string& name) const;  // accepts an empty int list too
  const Tensor& tensor(const std::string& name) const;

 private:
  std::map<std::string, AttrValue> map_;
};

}  // namespace dlc
