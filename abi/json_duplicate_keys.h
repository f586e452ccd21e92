// A key given twice in one JSON object. nlohmann keeps the last one, which another reader of
// the same file (a reviewer, a first-wins tool) may not: the project's strict readers (the
// sysfs snapshot, the sandbox policy) refuse such a file instead. Header-only, templated on
// the JSON type, so that abi/ itself does not link nlohmann.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rxp {

// Pass Callback() as nlohmann's parser_callback_t; after the parse, duplicate() names the
// first key seen twice in one object. One key set per open object, from the parser's events.
template <class Json>
class DuplicateKeyWatch {
 public:
  auto Callback() {
    return [this](int, typename Json::parse_event_t event, Json& parsed) {
      using Event = typename Json::parse_event_t;
      if (event == Event::object_start) open_objects_.emplace_back();
      if (event == Event::object_end && !open_objects_.empty()) open_objects_.pop_back();
      if (event == Event::key && !open_objects_.empty() && !duplicate_ &&
          !open_objects_.back().insert(parsed.template get<std::string>()).second)
        duplicate_ = parsed.template get<std::string>();
      return true;
    };
  }
  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  std::vector<std::set<std::string>> open_objects_;
  std::optional<std::string> duplicate_;
};

}  // namespace rxp
