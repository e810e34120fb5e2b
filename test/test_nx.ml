(* The OCaml test suites, one a line (a new family adds its line). *)

let () =
  Alcotest.run "nx_cpu"
    [
      ("Nx_array", T_array.tests);
      ("Nx_cpu.map", T_map.tests);
      ("kinds", T_kinds.tests);
      ("padded loads", T_pad.tests);
      ("reduce and scan", T_reduce.tests);
      ("domains", T_domains.tests);
      ("Nx", T_nx.tests);
      ("Nx properties", T_nx_props.tests);
      ("Nx gathers, scatters, sorts", T_nx_moves.tests);
      ("Nx products and factorisations", T_nx_products.tests);
      ("Nx.Ptree", T_nx_ptree.tests);
      ("Fourier transforms", T_fft.tests);
      ("contract", T_contract.tests);
      ("moves", T_moves.tests);
      ("Nx_cpu.sort", T_sort.tests);
      ("Nx_cpu.unique", T_unique.tests);
      ("matrices", T_linalg.tests);
    ]
