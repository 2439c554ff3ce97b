# Installs tgc into a scratch prefix, then configures, builds and runs
# examples/embed against it: proof that find_package(TGC) works.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step(${CMAKE_COMMAND} --install ${TGC_BINARY_DIR} --prefix ${prefix})
set(launcher)
find_program(CCACHE ccache)
if(CCACHE)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE})
endif()
run_step(${CMAKE_COMMAND} -G Ninja -S ${TGC_SOURCE_DIR}/examples/embed
  -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release ${launcher})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${WORK_DIR}/build/embed-pipeline ${TGC_SOURCE_DIR}/examples/mlp.mlir)
if(NOT step_output MATCHES "func.func @mlp_step")
  message(FATAL_ERROR "unexpected output of embed-pipeline:\n${step_output}")
endif()
message(STATUS "embed-pipeline ran the installed pipeline on examples/mlp.mlir")
