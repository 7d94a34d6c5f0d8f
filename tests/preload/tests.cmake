# tests/preload - libbpfrt-preload.so (`bpfrt exec`) under libbpf programs built at test
# time against the system libbpf, on the kernel and on bpfrt, as root and as uid 65534.
add_test(NAME preload.libbpf COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/preload/preload.sh
                                     $<TARGET_FILE:bpfrt_cli> ${CMAKE_SOURCE_DIR}
                                     ${BPFRT_UNPRIV_LOCK})
set_tests_properties(preload.libbpf PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME preload.attach COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/preload/attach.sh
                                     $<TARGET_FILE:bpfrt_cli> ${CMAKE_SOURCE_DIR})
set_tests_properties(preload.attach PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)
# bpftool prog dump xlated of the C corpus: the kernel's text under bpfrt (api/xlated.c)
add_test(NAME preload.xlated COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/preload/xlated.sh
                                     $<TARGET_FILE:bpfrt_cli> ${CMAKE_SOURCE_DIR}
                                     ${CMAKE_BINARY_DIR}/progs)
set_tests_properties(preload.xlated PROPERTIES LABELS oracle SKIP_RETURN_CODE 77 TIMEOUT 300)
# links of a libbpf application seen by bpftool and a walker in another process
add_test(NAME preload.links COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/preload/links.sh
                                    $<TARGET_FILE:bpfrt_cli> ${CMAKE_SOURCE_DIR})
set_tests_properties(preload.links PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)
# close() of a link's last fd: detached and gone by id before it returns, as the kernel's
add_test(NAME preload.link_close COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/preload/linkclose.sh
                                         $<TARGET_FILE:bpfrt_cli> ${CMAKE_SOURCE_DIR})
set_tests_properties(preload.link_close PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)
# A sanitized libbpfrt-preload.so cannot be preloaded into programs built without the
# sanitizer's runtime (ASan wants its runtime first in the library list): skipped there.
if(BPFRT_SANITIZE)
  set_tests_properties(preload.libbpf preload.attach preload.xlated preload.links
                       preload.link_close PROPERTIES
                       ENVIRONMENT "BPFRT_SANITIZED=${BPFRT_SANITIZE}")
endif()
