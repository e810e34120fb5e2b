(** Devices: where memory lives and which processors address it. *)

type t = Host  (** The host: main memory, addressed by the CPU. *)

val host : t
(** The host. *)

val reaches : t -> t -> bool
(** [reaches a b] is [true] iff [a]'s processors address [b]'s memory. *)

val name : t -> string
(** The device's name in messages. *)
