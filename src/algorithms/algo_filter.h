// The TCCL_ALGO grammar, as NCCL_ALGO: a ';'-separated list of clauses. A clause is either a
// comma list of algorithm names that applies to every collective offering one of them, or
// "<collective>:<list>" for one collective. A list starting with '^' excludes instead of allows.
//   TCCL_ALGO="ring"                      all-reduce/all-gather/reduce-scatter use ring
//   TCCL_ALGO="allreduce:direct"          all-reduce uses direct; the rest choose freely
//   TCCL_ALGO="allreduce:^direct"         all-reduce never uses direct
// An unknown collective or algorithm name is an error, never silently ignored.
#pragma once

#include <set>
#include <string>

#include "algorithms/schedule.h"
#include "core/status.h"

namespace tccl {

struct AlgoFilter {
  struct Rule {
    bool present = false;
    bool exclude = false;
    std::set<std::string> names;
  };
  Rule global;
  Rule perColl[6];  // indexed by CollKind

  // True if the algorithm `name` may run for `coll`. `offered` lists the algorithms the
  // collective has (a global rule naming none of them does not apply).
  bool Allows(CollKind coll, const std::string& name, const std::set<std::string>& offered) const;
};

Status ParseAlgoFilter(const std::string& text, AlgoFilter* out);
bool ParseCollName(const std::string& s, CollKind* out);

}  // namespace tccl
