" Vim syntax file
" Language:    Dogwood policy sets (.dw) and Cedar policies (.cedar)
" Maintainer:  the dwc project (docs/EDITORS.md)
" Cedar's policy language plus Dogwood's temporal bodies and macros
" (dogwood.md §2, §3, §6, §10).  cedar.vim uses this file.

if exists("b:current_syntax")
  finish
endif

syn keyword dwEffect      permit forbid
syn keyword dwClause      when unless guardrails
syn keyword dwConditional if then else
syn keyword dwOperator    in is like has
syn keyword dwBoolean     true false
syn keyword dwVariable    principal action resource context
syn keyword dwTemporalOp  formerly previous since within exists count sum for where tp
syn keyword dwType        Timepoint
syn match   dwDef         "\<def\>\ze\s\+\(cedar\|temporal\)\>"
syn match   dwDefKind     "\<def\s\+\zs\(cedar\|temporal\)\>"
syn match   dwMacroName   "\<def\s\+\(cedar\|temporal\)\s\+\zs\h\w*"
syn match   dwTemporalKw  "\<temporal\ze\s*{"
syn match   dwAnnotation  "@\h\w*"
syn match   dwSlot        "?\h\w*"
syn match   dwBinder      "\$\h\w*"
syn match   dwNumber      "\<\d\+\>"
syn match   dwWindow      "\<\d\+[smhd]\>"
" a type path before a quoted id (Box::Action::"fs:read"), and an event kind after one
syn match   dwTypePath    "\<\(\h\w*::\)\+\ze\""
syn match   dwEventKind   "::\zs\h\w*\ze\s*{"
syn match   dwExtension   "\<\(decimal\|ip\|datetime\|duration\)\ze\s*("
syn match   dwEscape      contained "\\\([nrt\\0'\"*]\|x\x\x\|u{\x\{1,6}}\)"
syn region  dwString      start=+"+ skip=+\\\\\|\\"+ end=+"+ oneline contains=dwEscape
syn match   dwComment     "//.*$" contains=@Spell

hi def link dwEffect      Statement
hi def link dwClause      Keyword
hi def link dwConditional Conditional
hi def link dwOperator    Operator
hi def link dwBoolean     Boolean
hi def link dwVariable    Identifier
hi def link dwTemporalOp  Keyword
hi def link dwTemporalKw  Keyword
hi def link dwType        Type
hi def link dwDef         StorageClass
hi def link dwDefKind     StorageClass
hi def link dwMacroName   Function
hi def link dwAnnotation  PreProc
hi def link dwSlot        Special
hi def link dwBinder      Special
hi def link dwNumber      Number
hi def link dwWindow      Number
hi def link dwTypePath    Type
hi def link dwEventKind   Tag
hi def link dwExtension   Function
hi def link dwEscape      SpecialChar
hi def link dwString      String
hi def link dwComment     Comment

let b:current_syntax = "dogwood"
