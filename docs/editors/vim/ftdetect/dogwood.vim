" File types of the dwc project (docs/EDITORS.md)
autocmd BufRead,BufNewFile *.dw          setfiletype dogwood
autocmd BufRead,BufNewFile *.cedar       setfiletype cedar
autocmd BufRead,BufNewFile *.cedarschema setfiletype cedarschema
autocmd BufRead,BufNewFile *.dwschema    setfiletype dwschema
