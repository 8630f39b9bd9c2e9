// The key-table part of a layout profile (docs/DEBUG-INTERFACE.md §9): the counts, the named key
// sets, the backend names, the runtime keys in slot order and every key with its bits, slot,
// aliases and autograd backends. One writer for every c10: probe.cpp includes it with a real
// PyTorch build's c10 in scope, and DispatchScope's runtime (runtime/tools/write_profile.cpp) with
// its mirror's, so both profiles state their keys by the same rules.
//
// The includer brings into scope, from its c10: DispatchKey, DispatchKeySet, BackendComponent,
// toString, isAliasDispatchKey, isIncludedInAlias, getDispatchTableIndexForDispatchKey,
// getBackendKeySetFromAutograd, num_backends, num_functionality_keys, num_runtime_entries,
// default_included_set, default_excluded_set, autogradother_backends, full_backend_mask, and a
// rawBits(DispatchKeySet) (raw_repr() is non-const in 1.13). C++14: the probe compiles with the
// standard of the build it describes. It is included inside the includer's namespace, after
// <cstdarg>, <cstdio>, <string> and <vector>.

inline void appendf(std::string& out, const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n > 0) out.append(line, static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1);
}

inline void appendKeyTable(std::string& out) {
  const int last_key = static_cast<int>(DispatchKey::EndOfAliasKeys);
  appendf(out, "count_backends %d\n", static_cast<int>(num_backends));
  appendf(out, "count_functionality_keys %d\n", static_cast<int>(num_functionality_keys));
  appendf(out, "count_table_slots %d\n", static_cast<int>(num_runtime_entries));
  appendf(out, "count_dispatch_keys %d\n", last_key + 1);
  appendf(out, "set_default_included 0x%016llx\n", static_cast<unsigned long long>(rawBits(default_included_set)));
  appendf(out, "set_default_excluded 0x%016llx\n", static_cast<unsigned long long>(rawBits(default_excluded_set)));
  appendf(out, "set_autogradother_backends 0x%016llx\n", static_cast<unsigned long long>(rawBits(autogradother_backends)));
  appendf(out, "set_full_backend_mask 0x%016llx\n", static_cast<unsigned long long>(full_backend_mask));

  for (int b = 1; b <= num_backends; ++b) appendf(out, "backend %d %s\n", b - 1, toString(static_cast<BackendComponent>(b)));
  // Every key with its raw bits and slot; alias keys list the runtime keys they cover, and an
  // autograd key the backend keys it stands in front of (computeDispatchTableEntry's rules).
  std::vector<DispatchKey> aliases;
  for (int v = 0; v <= last_key; ++v)
    if (isAliasDispatchKey(static_cast<DispatchKey>(v))) aliases.push_back(static_cast<DispatchKey>(v));
  out += "runtime-keys 0";
  for (DispatchKey k : DispatchKeySet(DispatchKeySet::FULL)) appendf(out, " %d", static_cast<int>(k));
  out += "\n";
  for (int v = 0; v <= last_key; ++v) {
    const auto k = static_cast<DispatchKey>(v);
    const bool alias = isAliasDispatchKey(k);
    uint64_t bits = 0;
    int slot = -1;
    if (!alias && v != 0 && k != DispatchKey::EndOfFunctionalityKeys) {
      bits = rawBits(DispatchKeySet(k));
      slot = getDispatchTableIndexForDispatchKey(k);
    }
    appendf(out, "key %d %s bits=0x%llx slot=%d", v, toString(k), static_cast<unsigned long long>(bits), slot);
    if (alias) out += " alias";
    std::string in;
    if (!alias && v != 0)
      for (DispatchKey a : aliases)
        if (isIncludedInAlias(k, a)) in += (in.empty() ? "" : ",") + std::to_string(static_cast<int>(a));
    if (!in.empty()) out += " in=" + in;
    const uint64_t backends = alias || v == 0 ? 0 : rawBits(getBackendKeySetFromAutograd(k));
    if (backends) appendf(out, " autograd-backends=0x%llx", static_cast<unsigned long long>(backends));
    out += "\n";
  }
}
