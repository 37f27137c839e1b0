module example.com/gotestmodule

go 1.22
