" Vim syntax file
" Language:    Cedar schemas, human syntax (.cedarschema)
" Maintainer:  the dwc project (docs/EDITORS.md)

if exists("b:current_syntax")
  finish
endif

syn keyword csDecl       namespace entity action type
syn keyword csKeyword    appliesTo in enum tags principal resource context
syn keyword csPrimitive  Bool Boolean Long String Set Record Entity Extension decimal ipaddr datetime duration
syn match   csName       "\<\(namespace\|entity\|type\)\s\+\zs\h\w*\(::\h\w*\)*"
syn match   csAnnotation "@\h\w*"
syn match   csOptional   "?"
syn region  csString     start=+"+ skip=+\\\\\|\\"+ end=+"+ oneline
syn match   csComment    "//.*$" contains=@Spell

hi def link csDecl       StorageClass
hi def link csKeyword    Keyword
hi def link csPrimitive  Type
hi def link csName       Type
hi def link csAnnotation PreProc
hi def link csOptional   Operator
hi def link csString     String
hi def link csComment    Comment

let b:current_syntax = "cedarschema"
