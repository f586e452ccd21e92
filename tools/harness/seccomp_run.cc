#include "tools/harness/seccomp_run.h"

#include <array>
#include <cstring>
#include <optional>

namespace rxp::harness {
namespace {

constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t kDataSize = sizeof(seccomp_data);

// The 32-bit word at byte offset k of seccomp_data, as BPF_LD|BPF_W|BPF_ABS reads it there
// (seccomp_check_filter only admits aligned offsets inside the struct).
bool LoadWord(const seccomp_data& data, uint32_t k, uint32_t* out) {
  if (k % 4 != 0 || k >= kDataSize) return false;
  std::memcpy(out, reinterpret_cast<const unsigned char*>(&data) + k, sizeof *out);
  return true;
}

// BPF_LD into A, BPF_LDX into X: a word of seccomp_data (A only), its length, an immediate, or
// scratch memory; all 32-bit (the kernel admits no other size or mode).
bool Load(uint16_t code, uint32_t k, const seccomp_data& data,
          const std::array<uint32_t, BPF_MEMWORDS>& mem, uint32_t& reg) {
  if (BPF_SIZE(code) != BPF_W) return false;
  switch (BPF_MODE(code)) {
    case BPF_ABS: return BPF_CLASS(code) == BPF_LD && LoadWord(data, k, &reg);
    case BPF_LEN: reg = kDataSize; return true;
    case BPF_IMM: reg = k; return true;
    case BPF_MEM:
      if (k >= BPF_MEMWORDS) return false;
      reg = mem[k];
      return true;
    default: return false;
  }
}

// BPF_ALU: the operand is K or X. Division by a zero X ends the program with 0, as the
// classic interpreter does (a zero K is refused when the filter is checked).
bool Alu(uint16_t code, uint32_t operand, uint32_t& a) {
  switch (BPF_OP(code)) {
    case BPF_ADD: a += operand; return true;
    case BPF_SUB: a -= operand; return true;
    case BPF_MUL: a *= operand; return true;
    case BPF_DIV:
      if (operand == 0) return false;
      a /= operand;
      return true;
    case BPF_AND: a &= operand; return true;
    case BPF_OR:  a |= operand; return true;
    case BPF_XOR: a ^= operand; return true;
    case BPF_LSH: a <<= (operand & 31); return true;
    case BPF_RSH: a >>= (operand & 31); return true;
    case BPF_NEG: a = 0U - a; return true;
    default: return false;
  }
}

// A conditional BPF_JMP: whether it is taken; nullopt for an operation seccomp does not admit.
std::optional<bool> JumpTaken(uint16_t code, uint32_t a, uint32_t operand) {
  switch (BPF_OP(code)) {
    case BPF_JEQ: return a == operand;
    case BPF_JGT: return a > operand;
    case BPF_JGE: return a >= operand;
    case BPF_JSET: return (a & operand) != 0;
    default: return std::nullopt;
  }
}

}  // namespace

uint32_t RunSeccompProgram(std::span<const sock_filter> insns, const seccomp_data& data) {
  uint32_t a = 0;
  uint32_t x = 0;
  std::array<uint32_t, BPF_MEMWORDS> mem{};
  // Classic BPF jumps only forward, so the walk ends within insns.size() steps.
  for (size_t pc = 0; pc < insns.size(); ++pc) {
    const sock_filter& in = insns[pc];
    const uint16_t code = in.code;
    const uint32_t k = in.k;
    switch (BPF_CLASS(code)) {
      case BPF_LD:
        if (!Load(code, k, data, mem, a)) return kKill;
        break;
      case BPF_LDX:
        if (!Load(code, k, data, mem, x)) return kKill;
        break;
      case BPF_ST:
        if (k >= BPF_MEMWORDS) return kKill;
        mem[k] = a;
        break;
      case BPF_STX:
        if (k >= BPF_MEMWORDS) return kKill;
        mem[k] = x;
        break;
      case BPF_ALU:
        if (!Alu(code, BPF_SRC(code) == BPF_X ? x : k, a)) return BPF_OP(code) == BPF_DIV ? 0 : kKill;
        break;
      case BPF_JMP: {
        size_t skip = 0;
        if (BPF_OP(code) == BPF_JA) {
          skip = k;
        } else {
          const std::optional<bool> taken = JumpTaken(code, a, BPF_SRC(code) == BPF_X ? x : k);
          if (!taken) return kKill;
          skip = *taken ? in.jt : in.jf;
        }
        if (skip >= insns.size() - pc - 1) return kKill;  // past the last instruction
        pc += skip;
        break;
      }
      case BPF_RET:
        if (code == (BPF_RET | BPF_K)) return k;
        if (code == (BPF_RET | BPF_A)) return a;
        return kKill;
      case BPF_MISC:
        if (code == (BPF_MISC | BPF_TAX)) {
          x = a;
        } else if (code == (BPF_MISC | BPF_TXA)) {
          a = x;
        } else {
          return kKill;
        }
        break;
      default:
        return kKill;
    }
  }
  return kKill;  // fell off the end: the kernel requires a final RET
}

uint32_t RunSeccompStack(std::initializer_list<const BpfProgram*> newest_first,
                         const seccomp_data& data) {
  uint32_t result = SECCOMP_RET_ALLOW;
  for (const BpfProgram* program : newest_first) {
    if (program == nullptr) continue;
    const uint32_t value = RunSeccompProgram(program->insns(), data);
    // Strictly lower rank: an equal action keeps the newer filter's value.
    if (SeccompActionRank(value) < SeccompActionRank(result)) result = value;
  }
  return result;
}

}  // namespace rxp::harness
