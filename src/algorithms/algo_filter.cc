#include "algorithms/algo_filter.h"

#include <sstream>

#include "algorithms/registry.h"

namespace tccl {

namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool KnownAlgorithm(const std::string& name) {
  for (const AlgorithmInfo& a : AllAlgorithms())
    if (name == a.name) return true;
  return false;
}

Status ParseList(const std::string& text, const std::string& clause, AlgoFilter::Rule* rule) {
  std::string t = Trim(text);
  rule->present = true;
  if (!t.empty() && t[0] == '^') {
    rule->exclude = true;
    t = t.substr(1);
  }
  std::stringstream ss(t);
  std::string name;
  while (std::getline(ss, name, ',')) {
    name = Trim(name);
    if (name.empty()) return InvalidArgument("TCCL_ALGO clause '%s' has an empty algorithm name", clause.c_str());
    for (char& ch : name) ch = (char)tolower(ch);
    if (!KnownAlgorithm(name)) {
      std::set<std::string> names;
      for (const AlgorithmInfo& a : AllAlgorithms()) names.insert(a.name);
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      return InvalidArgument("TCCL_ALGO: unknown algorithm '%s' in '%s' (known: %s)", name.c_str(),
                             clause.c_str(), known.c_str());
    }
    rule->names.insert(name);
  }
  if (rule->names.empty()) return InvalidArgument("TCCL_ALGO clause '%s' names no algorithm", clause.c_str());
  return Status::Ok();
}

}  // namespace

bool ParseCollName(const std::string& s, CollKind* out) {
  static const struct {
    const char* name;
    CollKind kind;
  } names[] = {{"allreduce", CollKind::AllReduce},         {"broadcast", CollKind::Broadcast},
               {"reduce", CollKind::Reduce},               {"allgather", CollKind::AllGather},
               {"reducescatter", CollKind::ReduceScatter}, {"alltoall", CollKind::AllToAll}};
  std::string l;
  for (char c : s)
    if (c != '_') l += (char)tolower(c);
  for (auto& n : names)
    if (l == n.name) {
      *out = n.kind;
      return true;
    }
  return false;
}

Status ParseAlgoFilter(const std::string& text, AlgoFilter* out) {
  *out = AlgoFilter();
  std::stringstream ss(text);
  std::string clause;
  while (std::getline(ss, clause, ';')) {
    if (Trim(clause).empty()) continue;
    size_t colon = clause.find(':');
    if (colon == std::string::npos) {
      if (out->global.present)
        return InvalidArgument("TCCL_ALGO has two clauses for all collectives ('%s')", clause.c_str());
      TCCL_RETURN_IF_ERROR(ParseList(clause, clause, &out->global));
      continue;
    }
    CollKind k;
    std::string coll = Trim(clause.substr(0, colon));
    if (!ParseCollName(coll, &k))
      return InvalidArgument("TCCL_ALGO: unknown collective '%s' (known: allreduce, broadcast, reduce, "
                             "allgather, reducescatter, alltoall)",
                             coll.c_str());
    AlgoFilter::Rule& r = out->perColl[(int)k];
    if (r.present) return InvalidArgument("TCCL_ALGO names collective '%s' twice", coll.c_str());
    TCCL_RETURN_IF_ERROR(ParseList(clause.substr(colon + 1), clause, &r));
  }
  return Status::Ok();
}

bool AlgoFilter::Allows(CollKind coll, const std::string& name, const std::set<std::string>& offered) const {
  auto passes = [&](const Rule& r) { return r.exclude ? !r.names.count(name) : r.names.count(name) > 0; };
  const Rule& specific = perColl[(int)coll];
  if (specific.present) return passes(specific);
  if (global.present) {
    bool applies = global.exclude;
    for (const std::string& n : global.names) applies = applies || offered.count(n);
    if (applies) return passes(global);
  }
  return true;
}

}  // namespace tccl
