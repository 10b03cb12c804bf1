"""Hand-written Lean 4 content of the sample repositories (read by ``make_sample.py``).

Each file is ``(path, imports, namespace, opens, declarations)``; a declaration is either a
premise without a traced proof ``("def", name, code_after_name)`` or a traced theorem
``("thm", name, signature, goal, [(tactic, state_after), ...])``. Positions, annotations,
splits and the corpus are derived from this by ``make_sample.py``.
"""

LEAN = ".lake/packages/lean4/src/lean/"
CORE = LEAN + "Init/Core.lean"
NAT = LEAN + "Init/Data/Nat/Basic.lean"
LIST = LEAN + "Init/Data/List/Basic.lean"
INIT = LEAN + "Init.lean"

# The shared "Init" files: every sample repo's corpus holds them, so the repos overlap.
INIT_FILES = [
    (
        CORE,
        [],
        "",
        [],
        [
            ("theorem", "Eq.symm", " {α : Sort u} {a b : α} (h : a = b) : b = a :=\n  h ▸ rfl"),
            (
                "theorem",
                "Eq.trans",
                " {α : Sort u} {a b c : α} (h₁ : a = b) (h₂ : b = c) : a = c :=\n  h₂ ▸ h₁",
            ),
            (
                "theorem",
                "congrArg",
                " {α : Sort u} {β : Sort v} {a₁ a₂ : α} (f : α → β) (h : a₁ = a₂) : f a₁ = f a₂ :=\n  h ▸ rfl",
            ),
            (
                "theorem",
                "absurd",
                " {a : Prop} {b : Sort v} (h₁ : a) (h₂ : ¬a) : b :=\n  (h₂ h₁).rec",
            ),
            (
                "theorem",
                "Or.symm",
                " {a b : Prop} : a ∨ b → b ∨ a\n  | .inl h => .inr h\n  | .inr h => .inl h",
            ),
            ("theorem", "And.symm", " {a b : Prop} : a ∧ b → b ∧ a := fun ⟨ha, hb⟩ => ⟨hb, ha⟩"),
            ("theorem", "Iff.comm", " {a b : Prop} : (a ↔ b) ↔ (b ↔ a) :=\n  ⟨Iff.symm, Iff.symm⟩"),
        ],
    ),
    (
        NAT,
        [CORE],
        "",
        [],
        [
            ("theorem", "Nat.add_zero", " (n : Nat) : n + 0 = n := rfl"),
            (
                "theorem",
                "Nat.zero_add",
                " : ∀ (n : Nat), 0 + n = n\n  | 0 => rfl\n  | n+1 => congrArg succ (Nat.zero_add n)",
            ),
            ("theorem", "Nat.add_succ", " (n m : Nat) : n + succ m = succ (n + m) := rfl"),
            (
                "theorem",
                "Nat.succ_add",
                " : ∀ (n m : Nat), (succ n) + m = succ (n + m)\n  | _, 0 => rfl\n  | n, m+1 => congrArg succ (succ_add n m)",
            ),
            (
                "theorem",
                "Nat.add_comm",
                " : ∀ (n m : Nat), n + m = m + n\n  | n, 0 => Eq.symm (Nat.zero_add n)\n  | n, m+1 => by\n    have : succ (n + m) = succ (m + n) := by apply congrArg; apply Nat.add_comm\n    rw [succ_add m n]\n    apply this",
            ),
            (
                "theorem",
                "Nat.add_assoc",
                " : ∀ (n m k : Nat), (n + m) + k = n + (m + k)\n  | _, _, 0 => rfl\n  | n, m, succ k => congrArg succ (Nat.add_assoc n m k)",
            ),
            (
                "theorem",
                "Nat.add_left_comm",
                " (n m k : Nat) : n + (m + k) = m + (n + k) := by\n  rw [← Nat.add_assoc, Nat.add_comm n m, Nat.add_assoc]",
            ),
            ("theorem", "Nat.mul_zero", " (n : Nat) : n * 0 = 0 := rfl"),
            ("theorem", "Nat.mul_one", " : ∀ (n : Nat), n * 1 = n :=\n  Nat.zero_add"),
            (
                "theorem",
                "Nat.one_mul",
                " (n : Nat) : 1 * n = n :=\n  Nat.mul_comm n 1 ▸ Nat.mul_one n",
            ),
            (
                "theorem",
                "Nat.mul_comm",
                " : ∀ (n m : Nat), n * m = m * n\n  | n, 0 => (Nat.zero_mul n).symm ▸ (Nat.mul_zero n).symm ▸ rfl\n  | n, succ m => (succ_mul m n).symm ▸ (Nat.mul_succ n m).symm ▸ (Nat.mul_comm n m).symm ▸ rfl",
            ),
            (
                "theorem",
                "Nat.left_distrib",
                " (n m k : Nat) : n * (m + k) = n * m + n * k := by\n  induction n generalizing m k with\n  | zero => repeat rw [Nat.zero_mul]\n  | succ n ih => simp [succ_mul, ih]; rw [Nat.add_assoc, Nat.add_assoc (n*m)]; apply congrArg; apply Nat.add_left_comm",
            ),
            (
                "theorem",
                "Nat.mul_assoc",
                " : ∀ (n m k : Nat), (n * m) * k = n * (m * k)\n  | _, _, 0 => rfl\n  | n, m, succ k => by simp [Nat.mul_succ, Nat.mul_assoc n m k, Nat.left_distrib]",
            ),
            (
                "theorem",
                "Nat.two_mul",
                " (n : Nat) : 2 * n = n + n := by\n  rw [Nat.succ_mul, Nat.one_mul]",
            ),
            ("theorem", "Nat.le_refl", " (n : Nat) : n ≤ n :=\n  Nat.le.refl"),
            (
                "theorem",
                "Nat.le_trans",
                " {n m k : Nat} : n ≤ m → m ≤ k → n ≤ k\n  | h, Nat.le.refl => h\n  | h₁, Nat.le.step h₂ => Nat.le.step (Nat.le_trans h₁ h₂)",
            ),
            (
                "theorem",
                "Nat.zero_le",
                " : ∀ (n : Nat), 0 ≤ n\n  | 0 => Nat.le.refl\n  | n+1 => Nat.le.step (Nat.zero_le n)",
            ),
            (
                "theorem",
                "Nat.le_add_right",
                " : ∀ (n k : Nat), n ≤ n + k\n  | n, 0 => Nat.le_refl n\n  | n, k+1 => Nat.le_succ_of_le (Nat.le_add_right n k)",
            ),
            (
                "theorem",
                "Nat.le_add_left",
                " (n m : Nat) : n ≤ m + n :=\n  Nat.add_comm n m ▸ Nat.le_add_right n m",
            ),
            ("theorem", "Nat.lt_irrefl", " (n : Nat) : ¬n < n :=\n  Nat.not_succ_le_self n"),
            ("theorem", "Nat.max_def", " {n m : Nat} : max n m = if n ≤ m then m else n := rfl"),
        ],
    ),
    (
        LIST,
        [CORE, NAT],
        "",
        [],
        [
            ("theorem", "List.length_nil", " : ([] : List α).length = 0 := rfl"),
            (
                "theorem",
                "List.length_cons",
                " {α} (a : α) (as : List α) : (cons a as).length = as.length + 1 := rfl",
            ),
            ("theorem", "List.nil_append", " (as : List α) : [] ++ as = as := rfl"),
            (
                "theorem",
                "List.append_nil",
                " (as : List α) : as ++ [] = as := by\n  induction as with\n  | nil => rfl\n  | cons a as ih => simp_all [HAppend.hAppend, Append.append, List.append]",
            ),
            (
                "theorem",
                "List.append_assoc",
                " (as bs cs : List α) : (as ++ bs) ++ cs = as ++ (bs ++ cs) := by\n  induction as with\n  | nil => rfl\n  | cons a as ih => simp [ih]",
            ),
            (
                "theorem",
                "List.length_append",
                " (as bs : List α) : (as ++ bs).length = as.length + bs.length := by\n  induction as with\n  | nil => simp\n  | cons _ as ih => simp [ih, Nat.succ_add]",
            ),
            (
                "theorem",
                "List.map_cons",
                " (f : α → β) (a : α) (l : List α) : map f (a :: l) = f a :: map f l := rfl",
            ),
            (
                "theorem",
                "List.map_append",
                " (f : α → β) : ∀ l₁ l₂, map f (l₁ ++ l₂) = map f l₁ ++ map f l₂ := by\n  intro l₁; induction l₁ <;> intros <;> simp_all",
            ),
            (
                "theorem",
                "List.length_map",
                " (as : List α) (f : α → β) : (as.map f).length = as.length := by\n  induction as with\n  | nil => simp [List.map]\n  | cons a as ih => simp [List.map, ih]",
            ),
            (
                "theorem",
                "List.reverse_cons",
                " (a : α) (as : List α) : reverse (a :: as) = reverse as ++ [a] := by\n  simp [reverse, reverseAux]\n  rw [← reverseAux_eq_append]",
            ),
            (
                "theorem",
                "List.length_reverse",
                " (as : List α) : (as.reverse).length = as.length := by\n  induction as with\n  | nil => rfl\n  | cons a as ih => simp [ih]",
            ),
        ],
    ),
    (INIT, [NAT, LIST], "", [], []),
]

NO = "no goals"

# -- nat-basics ------------------------------------------------------------------------------
NAT_BASICS = [
    (
        "NatBasics/Defs.lean",
        [INIT],
        "NatBasics",
        [],
        [
            ("def", "double", " (n : ℕ) : ℕ := n + n"),
            ("def", "triple", " (n : ℕ) : ℕ := n + n + n"),
            ("def", "sumTo", " : ℕ → ℕ\n  | 0 => 0\n  | n + 1 => sumTo n + (n + 1)"),
            ("def", "IsEven", " (n : ℕ) : Prop := ∃ k, n = k + k"),
        ],
    ),
    (
        "NatBasics/Lemmas.lean",
        ["NatBasics/Defs.lean"],
        "NatBasics",
        [],
        [
            (
                "thm",
                "double_eq_two_mul",
                "(n : ℕ) : double n = 2 * n",
                "n : ℕ\n⊢ double n = 2 * n",
                [
                    ("unfold double", "n : ℕ\n⊢ n + n = 2 * n"),
                    ("rw [Nat.two_mul]", NO),
                ],
            ),
            ("thm", "double_zero", ": double 0 = 0", "⊢ double 0 = 0", [("rfl", NO)]),
            (
                "thm",
                "double_add",
                "(m n : ℕ) : double (m + n) = double m + double n",
                "m n : ℕ\n⊢ double (m + n) = double m + double n",
                [
                    ("simp only [double]", "m n : ℕ\n⊢ m + n + (m + n) = m + m + (n + n)"),
                    ("omega", NO),
                ],
            ),
            (
                "thm",
                "triple_eq",
                "(n : ℕ) : triple n = double n + n",
                "n : ℕ\n⊢ triple n = double n + n",
                [
                    ("simp [triple, double]", NO),
                ],
            ),
            (
                "thm",
                "add_zero'",
                "(n : ℕ) : n + 0 = n",
                "n : ℕ\n⊢ n + 0 = n",
                [("exact Nat.add_zero n", NO)],
            ),
            (
                "thm",
                "zero_add'",
                "(n : ℕ) : 0 + n = n",
                "n : ℕ\n⊢ 0 + n = n",
                [
                    (
                        "induction n with\n  | zero => rfl\n  | succ k ih => rw [Nat.add_succ, ih]",
                        NO,
                    ),
                ],
            ),
            (
                "thm",
                "add_comm'",
                ": ∀ m n : ℕ, m + n = n + m",
                "⊢ ∀ (m n : ℕ), m + n = n + m",
                [
                    ("intro m n", "m n : ℕ\n⊢ m + n = n + m"),
                    ("exact Nat.add_comm m n", NO),
                ],
            ),
            (
                "thm",
                "sumTo_succ",
                "(n : ℕ) : sumTo (n + 1) = sumTo n + (n + 1)",
                "n : ℕ\n⊢ sumTo (n + 1) = sumTo n + (n + 1)",
                [
                    ("simp [sumTo]", NO),
                ],
            ),
            (
                "thm",
                "two_mul_sumTo",
                "(n : ℕ) : 2 * sumTo n = n * (n + 1)",
                "n : ℕ\n⊢ 2 * sumTo n = n * (n + 1)",
                [
                    (
                        "induction n with\n  | zero => rfl\n  | succ k ih =>\n    rw [sumTo_succ, Nat.left_distrib, ih]\n    simp only [Nat.left_distrib, Nat.mul_comm]\n    omega",
                        NO,
                    ),
                ],
            ),
            (
                "thm",
                "double_even",
                "(n : ℕ) : IsEven (double n)",
                "n : ℕ\n⊢ IsEven (double n)",
                [
                    ("unfold IsEven double", "n : ℕ\n⊢ ∃ k, n + n = k + k"),
                    ("exact ⟨n, rfl⟩", NO),
                ],
            ),
            (
                "thm",
                "even_add",
                "{m n : ℕ} (hm : IsEven m) (hn : IsEven n) : IsEven (m + n)",
                "m n : ℕ\nhm : IsEven m\nhn : IsEven n\n⊢ IsEven (m + n)",
                [
                    ("obtain ⟨a, rfl⟩ := hm", "n a : ℕ\nhn : IsEven n\n⊢ IsEven (a + a + n)"),
                    ("obtain ⟨b, rfl⟩ := hn", "a b : ℕ\n⊢ IsEven (a + a + (b + b))"),
                    ("refine ⟨a + b, ?_⟩", "a b : ℕ\n⊢ a + a + (b + b) = a + b + (a + b)"),
                    ("omega", NO),
                ],
            ),
            (
                "thm",
                "le_double",
                "(n : ℕ) : n ≤ double n",
                "n : ℕ\n⊢ n ≤ double n",
                [
                    ("unfold double", "n : ℕ\n⊢ n ≤ n + n"),
                    ("exact Nat.le_add_right n n", NO),
                ],
            ),
            (
                "thm",
                "mul_comm_assoc",
                "(a b c : ℕ) : a * b * c = b * (a * c)",
                "a b c : ℕ\n⊢ a * b * c = b * (a * c)",
                [
                    ("rw [Nat.mul_comm a b]", "a b c : ℕ\n⊢ b * a * c = b * (a * c)"),
                    ("rw [Nat.mul_assoc]", NO),
                ],
            ),
            (
                "thm",
                "sumTo_le_sq",
                "(n : ℕ) : sumTo n ≤ n * n + n",
                "n : ℕ\n⊢ sumTo n ≤ n * n + n",
                [
                    ("sorry", NO),
                ],
            ),
            (
                "thm",
                "succ_le_double",
                "{n : ℕ} (h : 0 < n) : n + 1 ≤ double n",
                "n : ℕ\nh : 0 < n\n⊢ n + 1 ≤ double n",
                [
                    ("unfold double", "n : ℕ\nh : 0 < n\n⊢ n + 1 ≤ n + n"),
                    ("omega", NO),
                ],
            ),
        ],
    ),
    (
        "NatBasics/Order.lean",
        ["NatBasics/Defs.lean"],
        "NatBasics",
        [],
        [
            (
                "thm",
                "le_trans'",
                "{a b c : ℕ} (h₁ : a ≤ b) (h₂ : b ≤ c) : a ≤ c",
                "a b c : ℕ\nh₁ : a ≤ b\nh₂ : b ≤ c\n⊢ a ≤ c",
                [
                    ("exact Nat.le_trans h₁ h₂", NO),
                ],
            ),
            (
                "thm",
                "lt_irrefl'",
                "(n : ℕ) : ¬n < n",
                "n : ℕ\n⊢ ¬n < n",
                [
                    ("intro h", "n : ℕ\nh : n < n\n⊢ False"),
                    ("exact Nat.lt_irrefl n h", NO),
                ],
            ),
            (
                "thm",
                "zero_le_double",
                "(n : ℕ) : 0 ≤ double n",
                "n : ℕ\n⊢ 0 ≤ double n",
                [
                    ("exact Nat.zero_le _", NO),
                ],
            ),
            (
                "thm",
                "max_comm'",
                "(a b : ℕ) : max a b = max b a",
                "a b : ℕ\n⊢ max a b = max b a",
                [
                    (
                        "simp only [Nat.max_def]",
                        "a b : ℕ\n⊢ (if a ≤ b then b else a) = if b ≤ a then a else b",
                    ),
                    ("split <;> split <;> omega", NO),
                ],
            ),
        ],
    ),
    ("NatBasics.lean", ["NatBasics/Lemmas.lean", "NatBasics/Order.lean"], "", [], []),
]

# -- list-basics (depends on nat-basics) -----------------------------------------------------
NB = ".lake/packages/nat-basics/"
LIST_BASICS = [
    (
        "ListBasics/Defs.lean",
        [INIT, NB + "NatBasics.lean"],
        "ListBasics",
        ["NatBasics"],
        [
            ("def", "sumList", " : List ℕ → ℕ\n  | [] => 0\n  | x :: xs => x + sumList xs"),
            ("def", "doubleAll", " (l : List ℕ) : List ℕ := l.map double"),
        ],
    ),
    (
        "ListBasics/Length.lean",
        ["ListBasics/Defs.lean"],
        "ListBasics",
        ["NatBasics"],
        [
            (
                "thm",
                "length_append'",
                "(l₁ l₂ : List α) : (l₁ ++ l₂).length = l₁.length + l₂.length",
                "α : Type u_1\nl₁ l₂ : List α\n⊢ (l₁ ++ l₂).length = l₁.length + l₂.length",
                [
                    ("simp [List.length_append]", NO),
                ],
            ),
            (
                "thm",
                "length_doubleAll",
                "(l : List ℕ) : (doubleAll l).length = l.length",
                "l : List ℕ\n⊢ (doubleAll l).length = l.length",
                [
                    ("simp [doubleAll, List.length_map]", NO),
                ],
            ),
            (
                "thm",
                "reverse_length",
                "(l : List α) : l.reverse.length = l.length",
                "α : Type u_1\nl : List α\n⊢ l.reverse.length = l.length",
                [
                    ("exact List.length_reverse l", NO),
                ],
            ),
            (
                "thm",
                "append_nil'",
                "(l : List α) : l ++ [] = l",
                "α : Type u_1\nl : List α\n⊢ l ++ [] = l",
                [("simp", NO)],
            ),
            (
                "thm",
                "cons_ne_nil'",
                "(x : α) (l : List α) : x :: l ≠ []",
                "α : Type u_1\nx : α\nl : List α\n⊢ x :: l ≠ []",
                [
                    ("intro h", "α : Type u_1\nx : α\nl : List α\nh : x :: l = []\n⊢ False"),
                    ("cases h", NO),
                ],
            ),
            (
                "thm",
                "length_pos_of_mem",
                "{x : α} {l : List α} (h : x ∈ l) : 0 < l.length",
                "α : Type u_1\nx : α\nl : List α\nh : x ∈ l\n⊢ 0 < l.length",
                [
                    (
                        "cases l with\n  | nil => cases h\n  | cons y ys => simp [List.length_cons]",
                        NO,
                    ),
                ],
            ),
            (
                "thm",
                "length_append_comm",
                "(l₁ l₂ : List α) : (l₁ ++ l₂).length = (l₂ ++ l₁).length",
                "α : Type u_1\nl₁ l₂ : List α\n⊢ (l₁ ++ l₂).length = (l₂ ++ l₁).length",
                [
                    (
                        "rw [List.length_append, List.length_append]",
                        "α : Type u_1\nl₁ l₂ : List α\n⊢ l₁.length + l₂.length = l₂.length + l₁.length",
                    ),
                    ("exact Nat.add_comm _ _", NO),
                ],
            ),
            (
                "thm",
                "append_assoc'",
                "(a b c : List α) : a ++ b ++ c = a ++ (b ++ c)",
                "α : Type u_1\na b c : List α\n⊢ a ++ b ++ c = a ++ (b ++ c)",
                [
                    ("exact List.append_assoc a b c", NO),
                ],
            ),
            (
                "thm",
                "map_append'",
                "(f : α → β) (l₁ l₂ : List α) : (l₁ ++ l₂).map f = l₁.map f ++ l₂.map f",
                "α : Type u_1\nβ : Type u_2\nf : α → β\nl₁ l₂ : List α\n⊢ List.map f (l₁ ++ l₂) = List.map f l₁ ++ List.map f l₂",
                [
                    ("rw [List.map_append]", NO),
                ],
            ),
        ],
    ),
    (
        "ListBasics/Sum.lean",
        ["ListBasics/Defs.lean"],
        "ListBasics",
        ["NatBasics"],
        [
            ("thm", "sumList_nil", ": sumList [] = 0", "⊢ sumList [] = 0", [("rfl", NO)]),
            (
                "thm",
                "sumList_cons",
                "(x : ℕ) (xs : List ℕ) : sumList (x :: xs) = x + sumList xs",
                "x : ℕ\nxs : List ℕ\n⊢ sumList (x :: xs) = x + sumList xs",
                [
                    ("simp [sumList]", NO),
                ],
            ),
            (
                "thm",
                "sumList_append",
                "(l₁ l₂ : List ℕ) : sumList (l₁ ++ l₂) = sumList l₁ + sumList l₂",
                "l₁ l₂ : List ℕ\n⊢ sumList (l₁ ++ l₂) = sumList l₁ + sumList l₂",
                [
                    (
                        "induction l₁ with\n  | nil => simp [sumList]\n  | cons x xs ih => simp [sumList, ih, Nat.add_assoc]",
                        NO,
                    ),
                ],
            ),
            (
                "thm",
                "sumList_doubleAll",
                "(l : List ℕ) : sumList (doubleAll l) = double (sumList l)",
                "l : List ℕ\n⊢ sumList (doubleAll l) = double (sumList l)",
                [
                    (
                        "induction l with\n  | nil => rfl\n  | cons x xs ih =>\n    simp only [doubleAll, List.map_cons, sumList] at *\n    rw [ih, double_add]",
                        NO,
                    ),
                ],
            ),
            (
                "thm",
                "sumList_reverse",
                "(l : List ℕ) : sumList l.reverse = sumList l",
                "l : List ℕ\n⊢ sumList l.reverse = sumList l",
                [
                    (
                        "induction l with\n  | nil => rfl\n  | cons x xs ih =>\n    rw [List.reverse_cons, sumList_append, ih]\n    simp [sumList, Nat.add_comm]",
                        NO,
                    ),
                ],
            ),
            (
                "thm",
                "doubleAll_append",
                "(l₁ l₂ : List ℕ) : doubleAll (l₁ ++ l₂) = doubleAll l₁ ++ doubleAll l₂",
                "l₁ l₂ : List ℕ\n⊢ doubleAll (l₁ ++ l₂) = doubleAll l₁ ++ doubleAll l₂",
                [
                    (
                        "unfold doubleAll",
                        "l₁ l₂ : List ℕ\n⊢ List.map double (l₁ ++ l₂) = List.map double l₁ ++ List.map double l₂",
                    ),
                    ("exact List.map_append double l₁ l₂", NO),
                ],
            ),
        ],
    ),
    ("ListBasics.lean", ["ListBasics/Length.lean", "ListBasics/Sum.lean"], "", [], []),
]

# -- order-algebra (depends on nat-basics and list-basics) -----------------------------------
LB = ".lake/packages/list-basics/"
MON_CTX = "M : Type u_1\ninst✝ : MyMonoid M\n"
ORDER_ALGEBRA = [
    (
        "OrderAlgebra/Monoid.lean",
        [INIT, NB + "NatBasics.lean"],
        "OrderAlgebra",
        [],
        [
            (
                "class",
                "MyMonoid",
                " (M : Type u) extends Mul M, One M where\n  mul_assoc' : ∀ a b c : M, a * b * c = a * (b * c)\n  one_mul' : ∀ a : M, 1 * a = a\n  mul_one' : ∀ a : M, a * 1 = a",
            ),
            (
                "theorem",
                "MyMonoid.mul_assoc'",
                " [MyMonoid M] (a b c : M) : a * b * c = a * (b * c) :=\n  MyMonoid.toMul.mul_assoc' a b c",
            ),
            (
                "theorem",
                "MyMonoid.one_mul'",
                " [MyMonoid M] (a : M) : 1 * a = a :=\n  MyMonoid.toOne.one_mul' a",
            ),
            (
                "theorem",
                "MyMonoid.mul_one'",
                " [MyMonoid M] (a : M) : a * 1 = a :=\n  MyMonoid.toOne.mul_one' a",
            ),
            ("def", "npow", " [MyMonoid M] (a : M) : ℕ → M\n  | 0 => 1\n  | n + 1 => npow a n * a"),
            (
                "instance",
                "natMonoid",
                " : MyMonoid ℕ where\n  mul_assoc' := Nat.mul_assoc\n  one_mul' := Nat.one_mul\n  mul_one' := Nat.mul_one",
            ),
            (
                "thm",
                "mul_one_one",
                "[MyMonoid M] : (1 : M) * 1 = 1",
                MON_CTX + "⊢ 1 * 1 = 1",
                [
                    ("exact MyMonoid.one_mul' 1", NO),
                ],
            ),
            (
                "thm",
                "mul_assoc4",
                "[MyMonoid M] (a b c d : M) : a * b * c * d = a * (b * (c * d))",
                MON_CTX + "a b c d : M\n⊢ a * b * c * d = a * (b * (c * d))",
                [
                    (
                        "rw [MyMonoid.mul_assoc']",
                        MON_CTX + "a b c d : M\n⊢ a * b * (c * d) = a * (b * (c * d))",
                    ),
                    ("rw [MyMonoid.mul_assoc']", NO),
                ],
            ),
            (
                "thm",
                "one_unique",
                "[MyMonoid M] (e : M) (h : ∀ a : M, e * a = a) : e = 1",
                MON_CTX + "e : M\nh : ∀ (a : M), e * a = a\n⊢ e = 1",
                [
                    (
                        "have h1 := h 1",
                        MON_CTX + "e : M\nh : ∀ (a : M), e * a = a\nh1 : e * 1 = 1\n⊢ e = 1",
                    ),
                    (
                        "rw [MyMonoid.mul_one'] at h1",
                        MON_CTX + "e : M\nh : ∀ (a : M), e * a = a\nh1 : e = 1\n⊢ e = 1",
                    ),
                    ("exact h1", NO),
                ],
            ),
            (
                "thm",
                "nat_mul_one",
                "(n : ℕ) : n * 1 = n",
                "n : ℕ\n⊢ n * 1 = n",
                [
                    ("exact MyMonoid.mul_one' n", NO),
                ],
            ),
            (
                "thm",
                "npow_one",
                "[MyMonoid M] (a : M) : npow a 1 = a",
                MON_CTX + "a : M\n⊢ npow a 1 = a",
                [
                    ("simp only [npow]", MON_CTX + "a : M\n⊢ 1 * a = a"),
                    ("exact MyMonoid.one_mul' a", NO),
                ],
            ),
        ],
    ),
    (
        "OrderAlgebra/Order.lean",
        [INIT, NB + "NatBasics.lean"],
        "OrderAlgebra",
        [],
        [
            (
                "thm",
                "le_antisymm'",
                "{a b : ℕ} (h₁ : a ≤ b) (h₂ : b ≤ a) : a = b",
                "a b : ℕ\nh₁ : a ≤ b\nh₂ : b ≤ a\n⊢ a = b",
                [("omega", NO)],
            ),
            (
                "thm",
                "le_max_left'",
                "(a b : ℕ) : a ≤ max a b",
                "a b : ℕ\n⊢ a ≤ max a b",
                [
                    ("rw [Nat.max_def]", "a b : ℕ\n⊢ a ≤ if a ≤ b then b else a"),
                    (
                        "split",
                        "case isTrue\na b : ℕ\nh✝ : a ≤ b\n⊢ a ≤ b\n\ncase isFalse\na b : ℕ\nh✝ : ¬a ≤ b\n⊢ a ≤ a",
                    ),
                    ("assumption", "case isFalse\na b : ℕ\nh✝ : ¬a ≤ b\n⊢ a ≤ a"),
                    ("exact Nat.le_refl a", NO),
                ],
            ),
            (
                "thm",
                "and_swap",
                "(p q : Prop) (h : p ∧ q) : q ∧ p",
                "p q : Prop\nh : p ∧ q\n⊢ q ∧ p",
                [
                    ("obtain ⟨hp, hq⟩ := h", "p q : Prop\nhp : p\nhq : q\n⊢ q ∧ p"),
                    (
                        "constructor",
                        "case left\np q : Prop\nhp : p\nhq : q\n⊢ q\n\ncase right\np q : Prop\nhp : p\nhq : q\n⊢ p",
                    ),
                    ("exact hq", "case right\np q : Prop\nhp : p\nhq : q\n⊢ p"),
                    ("exact hp", NO),
                ],
            ),
            (
                "thm",
                "or_swap",
                "(p q : Prop) : p ∨ q → q ∨ p",
                "p q : Prop\n⊢ p ∨ q → q ∨ p",
                [
                    ("intro h", "p q : Prop\nh : p ∨ q\n⊢ q ∨ p"),
                    ("exact Or.symm h", NO),
                ],
            ),
            (
                "thm",
                "iff_comm'",
                "(p q : Prop) : (p ↔ q) ↔ (q ↔ p)",
                "p q : Prop\n⊢ (p ↔ q) ↔ (q ↔ p)",
                [
                    ("exact Iff.comm", NO),
                ],
            ),
            (
                "thm",
                "double_mono",
                "{a b : ℕ} (h : a ≤ b) : double a ≤ double b",
                "a b : ℕ\nh : a ≤ b\n⊢ double a ≤ double b",
                [
                    ("unfold NatBasics.double", "a b : ℕ\nh : a ≤ b\n⊢ a + a ≤ b + b"),
                    ("omega", NO),
                ],
            ),
        ],
    ),
    (
        "OrderAlgebra/ListSum.lean",
        ["OrderAlgebra/Monoid.lean", "OrderAlgebra/Order.lean", LB + "ListBasics.lean"],
        "OrderAlgebra",
        ["ListBasics", "NatBasics"],
        [
            (
                "thm",
                "sumList_append_comm",
                "(l₁ l₂ : List ℕ) : sumList (l₁ ++ l₂) = sumList (l₂ ++ l₁)",
                "l₁ l₂ : List ℕ\n⊢ sumList (l₁ ++ l₂) = sumList (l₂ ++ l₁)",
                [
                    (
                        "rw [ListBasics.sumList_append, ListBasics.sumList_append]",
                        "l₁ l₂ : List ℕ\n⊢ sumList l₁ + sumList l₂ = sumList l₂ + sumList l₁",
                    ),
                    ("exact Nat.add_comm _ _", NO),
                ],
            ),
            (
                "thm",
                "mem_le_sumList",
                "{x : ℕ} {l : List ℕ} (h : x ∈ l) : x ≤ sumList l",
                "x : ℕ\nl : List ℕ\nh : x ∈ l\n⊢ x ≤ sumList l",
                [
                    (
                        "induction l with\n  | nil => cases h\n  | cons y ys ih =>\n    simp only [ListBasics.sumList_cons]\n    cases h with\n    | head => exact Nat.le_add_right x _\n    | tail _ h' => exact Nat.le_trans (ih h') (Nat.le_add_left _ _)",
                        NO,
                    ),
                ],
            ),
            (
                "thm",
                "sumList_doubleAll_even",
                "(l : List ℕ) : IsEven (sumList (doubleAll l))",
                "l : List ℕ\n⊢ IsEven (sumList (doubleAll l))",
                [
                    (
                        "rw [ListBasics.sumList_doubleAll]",
                        "l : List ℕ\n⊢ IsEven (double (sumList l))",
                    ),
                    ("exact NatBasics.double_even _", NO),
                ],
            ),
            (
                "thm",
                "length_pos_iff",
                "(l : List α) : 0 < l.length ↔ l ≠ []",
                "α : Type u_1\nl : List α\n⊢ 0 < l.length ↔ l ≠ []",
                [
                    (
                        "constructor",
                        "case mp\nα : Type u_1\nl : List α\n⊢ 0 < l.length → l ≠ []\n\ncase mpr\nα : Type u_1\nl : List α\n⊢ l ≠ [] → 0 < l.length",
                    ),
                    (
                        "· intro h hl\n  simp [hl] at h",
                        "case mpr\nα : Type u_1\nl : List α\n⊢ l ≠ [] → 0 < l.length",
                    ),
                    (
                        "· intro h\n  cases l with\n  | nil => exact absurd rfl h\n  | cons x xs => simp [List.length_cons]",
                        NO,
                    ),
                ],
            ),
            (
                "thm",
                "npow_nat_one",
                "(n : ℕ) : npow n 1 = n",
                "n : ℕ\n⊢ npow n 1 = n",
                [
                    ("exact npow_one n", NO),
                ],
            ),
            (
                "thm",
                "sumList_le_of_sub",
                "(l : List ℕ) (x : ℕ) : sumList l ≤ sumList (x :: l)",
                "l : List ℕ\nx : ℕ\n⊢ sumList l ≤ sumList (x :: l)",
                [
                    (
                        "rw [ListBasics.sumList_cons]",
                        "l : List ℕ\nx : ℕ\n⊢ sumList l ≤ x + sumList l",
                    ),
                    ("exact Nat.le_add_left _ _", NO),
                ],
            ),
        ],
    ),
    ("OrderAlgebra.lean", ["OrderAlgebra/ListSum.lean"], "", [], []),
]

# (name, files, dependency repos as (path prefix, files of that repo)); Init is always included.
REPOS = [
    ("nat-basics", NAT_BASICS, []),
    ("list-basics", LIST_BASICS, [(NB, NAT_BASICS)]),
    ("order-algebra", ORDER_ALGEBRA, [(NB, NAT_BASICS), (LB, LIST_BASICS)]),
]
