type t = Host

let host = Host
let reaches a b = match (a, b) with Host, Host -> true
let name Host = "host"
