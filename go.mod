module github.com/ibscript/ibscript

go 1.25
