#include "source/dscope/DscopeProfile.h"

#include <list>
#include <mutex>

#include "dscope/debug/ProfileText.h"  // the profile of the runtime built beside this library

namespace dscope::inspect {

namespace {

// Every name of the list: what a reader resolves, so a profile lacking one is refused at load.
constexpr std::string_view kLayoutNames[] = {
#define DSCOPE_LAYOUT_NAME(name, expression) #name,
    DSCOPE_LAYOUT_PROFILE(DSCOPE_LAYOUT_NAME)
#undef DSCOPE_LAYOUT_NAME
};

DscopeProfile resolved(const std::string& text, const std::string& origin, const std::string& remedy) {
  static const ProfileNeeds needs = [] {
    ProfileNeeds n;
    n.runtime = "dscope";
    n.values.assign(std::begin(kLayoutNames), std::end(kLayoutNames));
    return n;
  }();
  DscopeProfile p{parseProfile(text, origin, remedy, needs), {}, 0};
  p.table_slots = p.profile.at("count_table_slots");  // bounded by the parser
#define DSCOPE_LAYOUT_RESOLVE(name, expression) p.layout.name = p.profile.at(#name);
  DSCOPE_LAYOUT_PROFILE(DSCOPE_LAYOUT_RESOLVE)
#undef DSCOPE_LAYOUT_RESOLVE
  return p;
}

}  // namespace

std::shared_ptr<const DscopeProfile> dscopeProfile(const std::string& text, const std::string& origin,
                                                   const std::string& remedy) {
  // A session reads one runtime's text again on every command: the texts parsed last, by content.
  static std::mutex mutex;
  static std::list<std::pair<std::string, std::shared_ptr<const DscopeProfile>>> parsed;
  constexpr size_t kKept = 4;
  {
    std::lock_guard lock(mutex);
    for (const auto& [kept_text, profile] : parsed)
      if (kept_text == text) return profile;
  }
  auto profile = std::make_shared<const DscopeProfile>(resolved(text, origin, remedy));
  std::lock_guard lock(mutex);
  parsed.emplace_front(text, profile);
  if (parsed.size() > kKept) parsed.pop_back();
  return profile;
}

std::shared_ptr<const DscopeProfile> ownProfile() {
  static const auto own = std::make_shared<const DscopeProfile>(
      resolved(DSCOPE_PROFILE_TEXT, "the layout profile these tools were built with", " (a build error)"));
  return own;
}

uint64_t ownProfileDigest() { return DSCOPE_PROFILE_DIGEST; }

const KeyTable& dscopeKeyTable() { return ownProfile()->profile.keys; }

}  // namespace dscope::inspect
