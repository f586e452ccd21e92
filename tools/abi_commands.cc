// `rdmaproxy abi ...`: the ABI schema from the command line.
//   abi coverage [-o FILE] [--check FILE]   docs/ABI.md, generated from the schema
//   abi decode FILE...                      print every captured call of vector files as trace lines
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "abi/coverage.h"
#include "tools/commands.h"
#include "tools/vectors.h"

namespace rxp::tools {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int Coverage(const std::string& output, const std::string& check) {
  const std::string text = abi::CoverageMarkdown();
  if (!check.empty()) {
    if (ReadFile(check) != text) {
      fmt::print(stderr,
                 "rdmaproxy: {} is out of date with the schema; regenerate it with "
                 "`cmake --build build --target abi-docs`\n",
                 check);
      return 1;
    }
    fmt::print("{} matches the schema\n", check);
    return 0;
  }
  if (output.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  std::ofstream out(output);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", output));
  return 0;
}

int Decode(const std::vector<std::string>& files) {
  int status = 0;
  for (const auto& path : files) {
    auto vectors = LoadVectors(path);
    if (!vectors) throw std::runtime_error(vectors.error().reason);
    fmt::print("# {} ({} calls, kernel {})\n", vectors->program, vectors->calls.size(),
               vectors->kernel);
    for (const auto& call : vectors->calls) fmt::print("{}\n", TraceLine(call));
  }
  return status;
}

}  // namespace

void AddAbiCommands(CLI::App& app) {
  CLI::App* abi = app.add_subcommand("abi", "The uverbs / rdma_cm ABI schema");
  abi->require_subcommand(1);

  CLI::App* coverage = abi->add_subcommand("coverage", "Print the ABI coverage table (docs/ABI.md)");
  auto output = std::make_shared<std::string>();
  auto check = std::make_shared<std::string>();
  coverage->add_option("-o,--output", *output, "Write it to FILE");
  coverage->add_option("--check", *check, "Fail unless FILE equals the generated table");
  RegisterRunner(coverage, [output, check] { return Coverage(*output, *check); });

  CLI::App* decode = abi->add_subcommand("decode", "Print captured ABI vectors as trace lines");
  auto files = std::make_shared<std::vector<std::string>>();
  decode->add_option("files", *files, "Vector files (.jsonl)")->required()->check(CLI::ExistingFile);
  RegisterRunner(decode, [files] { return Decode(*files); });
}

}  // namespace rxp::tools
