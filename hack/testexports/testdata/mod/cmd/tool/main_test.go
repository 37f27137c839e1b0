package main

func use() { Exported() }

// Exported is a command's name: commands are not checked.
func Exported() {}
