// Reading the SASS of generated code offline (tools/sass.hpp): the listing's summary, and
// a gallery kernel disassembled where ptxas and nvdisasm are installed (skips otherwise).
#include <doctest/doctest.h>

#include <string>

#include "gallery_ptx_util.hpp"
#include "tilefuse/tools/ptxas.hpp"
#include "tilefuse/tools/sass.hpp"

using namespace tilefuse;

TEST_CASE("SASS summary: instructions counted by opcode, predicates and modifiers dropped") {
  const std::string listing = R"(	.section	.text.k,"ax",@progbits
k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/              @!P1  FMUL R33, R33, 0.5 ;
        /*0020*/                   FMUL.FTZ R4, R74, 1.4426950216293334961 ;
        /*0030*/               @P6   LDG.E.EF.128 R4, desc[UR36][R20.64] ;
        /*0040*/              @!UP0 BRA 0x90 ;
        /*0050*/                   MUFU.EX2 R0, R3 ;
.L_x_1:
        /*0060*/                   EXIT ;
)";
  tools::SassSummary s = tools::summarize_sass(listing);
  CHECK(s.instructions == 7);
  CHECK(s.opcodes.at("FMUL") == 2);
  CHECK(s.opcodes.at("LDG") == 1);
  CHECK(s.opcodes.at("BRA") == 1);
  CHECK(s.opcodes.at("MUFU") == 1);
  CHECK(s.opcodes.count("k") == 0);
  std::string text = tools::to_string(s);
  CHECK(text.rfind("7 instructions\n  FMUL 2\n", 0) == 0);
}

TEST_CASE("SASS of a gallery kernel: the listing's instructions and its loads") {
  if (tools::find_cuda_tool("ptxas").empty() || tools::find_cuda_tool("nvdisasm").empty()) {
    MESSAGE("[skip] ptxas or nvdisasm not installed");
    return;
  }
  std::string ptx = gallery_ptx::gallery_ptx_of("softmax", DType::bf16, Config{{"BLOCK", 4096}, {"num_warps", 8}}, 16);
  tools::SassResult r = tools::disassemble(ptx, "sm_90a");
  REQUIRE_MESSAGE(r.ok, r.log);
  tools::SassSummary s = tools::summarize_sass(r.text);
  CHECK(s.instructions > 100);
  CHECK(s.opcodes["LDG"] == 2);  // 4096 / 256 threads = 16 elements: two 16-byte runs
  CHECK(s.opcodes["STG"] == 2);
  CHECK(s.opcodes["EXIT"] >= 1);
}
