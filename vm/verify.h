/* verify.h - the bytecode verifier.  Every program loaded from an artifact
 * passes through it before its first use: opcodes, operands, jump targets and
 * stack bounds are checked mechanically from opcode_list.h, so the dispatch
 * loop never has to. */
#ifndef DW_VERIFY_H
#define DW_VERIFY_H
#include <stddef.h>
#include "program.h"

/* 0 if the program is safe to run; otherwise -1 with a reason in msg. */
int dw_program_verify(const dw_program *p, char *msg, size_t cap);

#endif
