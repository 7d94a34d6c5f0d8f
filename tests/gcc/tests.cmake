# tests/gcc/tests.cmake - a second compiler (docs/CORPUS.md "A second compiler"): bpfrt's own
# eBPF C programs (tests/progs, samples, bench, tests/preload) compiled by GCC's BPF back end
# (Debian 12's gcc-bpf) at test time, then loaded program by program into the kernel and
# into bpfrt by corpus_diff (verdict, errno, log, test run), and their .BTF sections loaded
# into both by btf_oracle.  Label gcc (and oracle: root and the kernel); skipped with the
# reason without bpf-gcc, root or libbpf-dev.  Each takes a few seconds.
add_executable(gcc_btf_oracle ${CMAKE_CURRENT_LIST_DIR}/btf_oracle.c)
target_include_directories(gcc_btf_oracle PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(gcc_btf_oracle PRIVATE bpfrt_static)
if(TARGET corpus_diff)
  add_test(NAME gcc.corpus_diff
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/gcc_corpus.sh ${CMAKE_SOURCE_DIR}
            ${CMAKE_BINARY_DIR}/gcc-corpus $<TARGET_FILE:corpus_diff>
            $<TARGET_FILE:gcc_btf_oracle>)
  set_tests_properties(gcc.corpus_diff PROPERTIES LABELS "gcc;oracle" SKIP_RETURN_CODE 77
    TIMEOUT 300 WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
