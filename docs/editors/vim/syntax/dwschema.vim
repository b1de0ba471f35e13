" Vim syntax file
" Language:    Dogwood event schemas (.dwschema, dogwood.md §12)
" Maintainer:  the dwc project (docs/EDITORS.md)

if exists("b:current_syntax")
  finish
endif

syn keyword dsKeyword    decision event inputs outputs principalType resourceType pin max_window
syn keyword dsRoot       principal resource context
syn keyword dsPrimitive  Bool Boolean Long String Set
syn match   dsBinder     "<\h\w*>"
syn match   dsKind       "<\h\w*>\s*::\s*\zs\h\w*"
syn match   dsSpread     "\.\.\."
syn match   dsWindow     "\<\d\+\s*[smhd]\>"
syn region  dsString     start=+"+ skip=+\\\\\|\\"+ end=+"+ oneline
syn match   dsComment    "//.*$" contains=@Spell

hi def link dsKeyword    Keyword
hi def link dsRoot       Identifier
hi def link dsPrimitive  Type
hi def link dsBinder     Special
hi def link dsKind       Tag
hi def link dsSpread     Operator
hi def link dsWindow     Number
hi def link dsString     String
hi def link dsComment    Comment

let b:current_syntax = "dwschema"
