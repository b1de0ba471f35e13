/* opcode_list.h - THE list of VM instructions.  One X-macro feeds the
 * opcode enum and dw_opinfo_table (vm/program.h, vm/program.c), which the
 * compiler's stack tracking (compiler/compile.c), the verifier (vm/verify.c),
 * the disassembler (dw_program_disasm, vm/program.c) and the artifact writer
 * read; the interpreter's jump table (vm/interp.c); and the instruction-set
 * digest every artifact carries (dw_isa_text), so editing this list makes
 * older .dwb files refused.  Adding one: docs/ARCHITECTURE.md's checklist.
 *
 *   OP(name, operand kind, pops, pushes)      meaning
 *
 * Operand kinds: NONE; K (constant index); VAR (0 principal, 1 action,
 * 2 resource, 3 context); JUMP (absolute target: taken path pops like the
 * fall-through); JUMPK (taken path keeps the tested value: pops 0, pushes 0);
 * STR (string-table index); PAT (like-pattern index); COUNT (pops A values);
 * KEYS (key-list index: pops as many values as the list has keys);
 * CALL (A = fn << 16 | argc: pops argc values); LEAF (temporal leaf index); PROV (provider call site index);
 * PATH (key-list index, two or more names: pops 1).  pops == -1 means "from the operand" (COUNT, KEYS, CALL). */
OP(CONST,       K,     0, 1)   /* push K[A] */
OP(VAR,         VAR,   0, 1)   /* push request variable A */
OP(AND,         JUMPK, 1, 0)   /* v=top: !Bool -> type error; v false -> goto A (keep v); else pop */
OP(OR,          JUMPK, 1, 0)   /* v=top: !Bool -> type error; v true  -> goto A (keep v); else pop */
OP(JUMP_IF_NOT, JUMP,  1, 0)   /* c=pop: !Bool -> type error; !c -> goto A */
OP(JUMP,        JUMP,  0, 0)   /* goto A */
OP(CHECK_BOOL,  NONE,  1, 1)   /* top must be Bool */
OP(NOT,         NONE,  1, 1)   /* push !Bool(pop) */
OP(NEG,         NONE,  1, 1)   /* push -Long(pop), overflow checked */
OP(EQ,          NONE,  2, 1)   /* push a == b (any types, never errors) */
OP(NE,          NONE,  2, 1)   /* push a != b */
OP(LT,          NONE,  2, 1)   /* push a < b   (Long, datetime, duration) */
OP(LE,          NONE,  2, 1)   /* push a <= b */
OP(GT,          NONE,  2, 1)   /* push a > b */
OP(GE,          NONE,  2, 1)   /* push a >= b */
OP(ADD,         NONE,  2, 1)   /* push a + b   (Long, overflow checked) */
OP(SUB,         NONE,  2, 1)   /* push a - b */
OP(MUL,         NONE,  2, 1)   /* push a * b */
OP(IN,          NONE,  2, 1)   /* push a in b  (b entity or set of entities) */
OP(HAS,         STR,   1, 1)   /* push e has S[A] */
OP(GETATTR,     STR,   1, 1)   /* push e.S[A] */
OP(LIKE,        PAT,   1, 1)   /* push s like P[A] */
OP(IS,          STR,   1, 1)   /* push e is S[A] */
OP(MKSET,       COUNT, -1, 1)  /* push [A values] */
OP(MKRECORD,    KEYS,  -1, 1)  /* push {keys of KL[A]: values} */
OP(CALL,        CALL,  -1, 1)  /* push fn(args); methods take the receiver first */
OP(LEAF,        LEAF,  0, 1)   /* push the Bool of temporal leaf A (evaluated before the policy runs) */
OP(RET,         NONE,  1, 0)   /* return top (must be Bool) as the policy's result */
OP(PROV,        PROV,  0, 1)   /* push the value of provider call site A (evaluated before the policy runs) */
OP(HASPATH,     PATH,  1, 1)   /* push e has n1.n2…, names KL[A]: `e has n1 && e.n1 has n2 && …`, e evaluated once; false at
                                  the first missing name; a step on a value that is not a record or entity is HAS's type
                                  error, that value left on top */
