# tests/verifier - the case tables (cases/*.c) are linked into the case runner and the
# kernel oracle test.
file(GLOB BPFRT_VCASES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/verifier/cases/*.c)
foreach(t test_verifier_cases test_verifier_cases_oracle test_verifier_unpriv_oracle
          test_verifier_log2_oracle)
  target_sources(${t} PRIVATE ${BPFRT_VCASES})
  target_include_directories(${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/verifier)
endforeach()
target_include_directories(test_verifier_soundness PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/verifier)
target_compile_definitions(test_verifier_unpriv_oracle PRIVATE
  BPFRT_UNPRIV_LOCK="${BPFRT_UNPRIV_LOCK}")
target_compile_definitions(test_verifier_cases_oracle PRIVATE
  BPFRT_UNPRIV_LOCK="${BPFRT_UNPRIV_LOCK}")
add_test(NAME verifier.cli_verify
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/verifier/cli_verify.sh $<TARGET_FILE:bpfrt_cli>)
set_tests_properties(verifier.cli_verify PROPERTIES LABELS unit TIMEOUT 120)
# verifier.kfunc_oracle: the harness and load-time checks in test_kfunc_oracle.c, one file
# per family of kfuncs (kfunc_oracle.h).
target_sources(test_verifier_kfunc_oracle PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_net.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_objects.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_sections.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_str.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_throw.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_cast.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_crypto.c)
target_include_directories(test_verifier_kfunc_oracle PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/verifier)

# The bench's programs (bench/progs/progs.bpf.c) with BTF line info, for the level-2 log
# oracle (verifier.log2_oracle skips them when clang is missing).
find_program(BPFRT_BPF_CLANG NAMES clang clang-14 clang-15 clang-16)
if(BPFRT_BPF_CLANG)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/progs)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/progs/bench_progs.bpf.o
    COMMAND ${BPFRT_BPF_CLANG} -O2 -g -target bpf -mcpu=v3 -ffreestanding -Wall
            -c ${CMAKE_SOURCE_DIR}/bench/progs/progs.bpf.c
            -o ${CMAKE_BINARY_DIR}/progs/bench_progs.bpf.o
    DEPENDS ${CMAKE_SOURCE_DIR}/bench/progs/progs.bpf.c ${CMAKE_SOURCE_DIR}/bench/progs/flow.h
            ${CMAKE_SOURCE_DIR}/bench/progs/loop.h ${CMAKE_SOURCE_DIR}/bench/progs/progs.h
    COMMENT "clang -target bpf bench/progs/progs.bpf.c" VERBATIM)
  add_custom_target(bpfrt_bench_progs ALL DEPENDS ${CMAKE_BINARY_DIR}/progs/bench_progs.bpf.o)
endif()
