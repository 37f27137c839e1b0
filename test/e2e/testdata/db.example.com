$ORIGIN example.com.
@       30 IN SOA dns1.kube-system.example.com. hostmaster.example.com. 1 300 60 604800 30
@       30 IN NS  dns1.kube-system.example.com.
static  30 IN A   198.51.100.1
mail    30 IN A   198.51.100.25
