" Vim syntax file
" Language:    Cedar policies (.cedar)
" Maintainer:  the dwc project (docs/EDITORS.md)
" Every Cedar text is a Dogwood text (dogwood.md §2.4): the Dogwood syntax.

if exists("b:current_syntax")
  finish
endif
runtime! syntax/dogwood.vim
let b:current_syntax = "cedar"
