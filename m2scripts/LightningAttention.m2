-- LightningAttention: neuromanifolds of one lightning self-attention layer.
-- Part of the Python package ag-attention; usable on its own:
--   needsPackage("LightningAttention", FileName => "/path/to/LightningAttention.m2")
-- The option Weights of lightningParametrization is Core's symbol Weights (the
-- one of monoid options), not a new one: exporting a symbol of that name would
-- shadow Core's and break QQ[x, y, Weights => {2, 1}] after loading the package.
newPackage(
    "LightningAttention",
    Version => "0.1",
    Date => "2026-11-22",
    Authors => {{Name => "ag-attention developers"}},
    Headline => "parametrizations, closures and singular loci of lightning self-attention",
    Keywords => {"Applied Algebraic Geometry"},
    PackageImports => {"MinimalPrimes"},
    DebuggingMode => false
    )

export {
    -- types and constructor
    "LightningParametrization",
    "lightningParametrization",
    -- options
    "AttentionRank",
    "Tokens",
    "Coordinates",
    "Homogenize",
    "RankA",
    "RankV",
    -- computations
    "closureIdeal",
    "singularLocusIdeal",
    "baseLocusIdeal",
    "weightIdeals",
    "restrictedClosureIdeal",
    "coordinatePolynomials",
    "pointOf",
    "jacobianRankAt",
    "fiberComponents",
    "lowDegreeEquations",
    "closureDegree",
    "standardGrading",
    -- the loss landscape (ag-attention's ed-degree --method m2)
    "edDegree",
    "edSystem",
    -- the checks of Theorem 3.4 (ag-attention's reproduce theorem-3.4)
    "vanishesAt",
    "baseLocusType",
    "evaluatePoints",
    "theorem34Checks",
    "LiteralSingularLocus",
    -- output for programs
    "jsonEncode"
    }

LightningParametrization = new Type of HashTable
LightningParametrization.synonym = "parametrization of a lightning self-attention layer"

net LightningParametrization := P -> (
    "LightningParametrization: d = " | toString P#"d" | ", d' = " | toString P#"d'"
    | ", " | (if P#"rank" === null then "A free" else "rank A <= " | toString P#"rank")
    | ", t = " | toString P#"tokens" | ", " | P#"coordinates" | " coordinates ("
    | toString numgens P#"coordinateRing" | "), weights " | P#"weights"
    | " over " | toString coefficientRing P#"weightRing"
    )

-- base symbols of the ring variables, in a dictionary of our own: they print
-- as a, q, k, v, c but are not the user's symbols of those names
variableDictionary = new Dictionary
varBase = name -> getGlobalSymbol(variableDictionary, name)

-- quadratic monomials z_i z_j, i <= j (0-based), in the order of ag-attention
quadraticMonomials = d -> flatten apply(d, i -> apply(toList(i..d-1), j -> (i, j)))

-- the coordinates of phi: reduced (Prop. A.5) or full, as ag_attention/_models/coordinates.py defines them
-- (tests/data/coordinates.json pins both to the same values)
reducedCoordinates = (A, V) -> (
    d := numRows A; e := numRows V;
    flatten flatten apply(d, k -> apply(e, m -> apply(quadraticMonomials d, ij -> (
        (i, j) := ij;
        if i == j then A_(k, i) * V_(m, i) else A_(k, i) * V_(m, j) + A_(k, j) * V_(m, i)))))
    )

-- full coordinates: (y_i)_m = sum_j sum_k x_i[k] q_{k,m}(x_j), keyed by
-- (i, m, sorted triple of flat input indices), sorted like ag-attention
fullCoordinates = (A, V, t) -> (
    d := numRows A; e := numRows V;
    red := reducedCoordinates(A, V);
    Q := quadraticMonomials d;
    col := hashTable flatten flatten apply(d, k -> apply(e, m -> apply(#Q, n -> (k, m, Q#n) => k * e * #Q + m * #Q + n)));
    coeffs := new MutableHashTable;
    for i from 0 to t - 1 do for m from 0 to e - 1 do for j from 0 to t - 1 do
        for k from 0 to d - 1 do for uv in Q do (
            mono := sort {i * d + k, j * d + uv#0, j * d + uv#1};
            key := (i, m, mono);
            if not coeffs#?key then coeffs#key = 0_(ring A);
            coeffs#key = coeffs#key + red#(col#(k, m, uv)));
    keys' := sort apply(keys coeffs, key -> {key#0, key#1, key#2});
    apply(keys', key -> coeffs#(key#0, key#1, key#2))
    )

lightningParametrization = method(Options => {
        AttentionRank => null,
        Tokens => 2,
        Coordinates => "reduced",
        Weights => "AV",
        CoefficientRing => QQ,
        Homogenize => true
        })
lightningParametrization(ZZ, ZZ) := LightningParametrization => opts -> (d, e) -> (
    if d < 1 then error("lightningParametrization: d must be positive, got " | toString d);
    if e < 1 then error("lightningParametrization: d' must be positive, got " | toString e);
    t := opts.Tokens;
    if not instance(t, ZZ) or t < 1 then error("lightningParametrization: Tokens must be a positive integer, got " | toString t);
    coords := opts.Coordinates;
    if not member(coords, {"reduced", "full"}) then error("lightningParametrization: Coordinates must be \"reduced\" or \"full\", got " | toString coords);
    if coords == "reduced" and t < 2 then error "lightningParametrization: reduced coordinates need Tokens >= 2 (Prop. A.5)";
    w := opts.Weights;
    if not member(w, {"AV", "QKV"}) then error("lightningParametrization: Weights must be \"AV\" or \"QKV\", got " | toString w);
    a := opts.AttentionRank;
    if w == "QKV" and a === null then error "lightningParametrization: Weights => \"QKV\" needs AttentionRank";
    if a =!= null and (not instance(a, ZZ) or a < 1) then error("lightningParametrization: AttentionRank must be a positive integer, got " | toString a);
    kk := opts.CoefficientRing;
    -- weight ring, graded by (deg in A or (Q,K), deg in V)
    -- private symbols: variables print as a_(1,1), v_(1,1), c_1, ... without
    -- touching the user's own a, q, k, v, c
    aa := varBase "a"; qq := varBase "q"; ks := varBase "k"; vv := varBase "v"; cc := varBase "c";
    local R; local A; local V; local Rfree; local minorsIdeal;
    if w == "AV" then (
        Rfree = kk[aa_(1,1)..aa_(d,d), vv_(1,1)..vv_(e,d), Degrees => toList(d*d:{1,0}) | toList(e*d:{0,1})];
        A = matrix apply(d, k -> apply(d, l -> Rfree_(d*k + l)));
        V = matrix apply(e, m -> apply(d, l -> Rfree_(d*d + d*m + l)));
        minorsIdeal = if a =!= null and a < d then minors(a + 1, A) else ideal(0_Rfree);
        R = if a =!= null and a < d then Rfree / minorsIdeal else Rfree;
        A = sub(A, R); V = sub(V, R);
        )
    else (
        R = kk[qq_(1,1)..qq_(a,d), ks_(1,1)..ks_(a,d), vv_(1,1)..vv_(e,d),
            Degrees => toList(2*a*d:{1,0}) | toList(e*d:{0,1})];
        Q := matrix apply(a, c -> apply(d, l -> R_(d*c + l)));
        K := matrix apply(a, c -> apply(d, l -> R_(a*d + d*c + l)));
        V = matrix apply(e, m -> apply(d, l -> R_(2*a*d + d*m + l)));
        A = transpose Q * K;
        minorsIdeal = ideal(0_R);
        );
    polys := if coords == "reduced" then reducedCoordinates(A, V) else fullCoordinates(A, V, t);
    n := #polys;
    degA := if w == "AV" then 1 else 2;
    S := if opts.Homogenize
        then kk[cc_1..cc_n, Degrees => toList(n:{degA, 1})]
        else kk[cc_1..cc_n];
    new LightningParametrization from {
        "d" => d, "d'" => e, "rank" => a, "tokens" => t,
        "coordinates" => coords, "weights" => w,
        "weightRing" => R, "coordinateRing" => S,
        "attentionMatrix" => A, "valueMatrix" => V,
        "polynomials" => polys,
        "map" => map(R, S, polys),
        "domainIdeal" => minorsIdeal,
        cache => new CacheTable
        }
    )

coordinatePolynomials = method()
coordinatePolynomials LightningParametrization := List => P -> P#"polynomials"

-- Zariski closure of the image: the kernel of the parametrization
closureIdeal = method()
closureIdeal LightningParametrization := Ideal => P -> (
    if not P.cache#?"closure" then P.cache#"closure" = trim kernel P#"map";
    P.cache#"closure"
    )

singularLocusIdeal = method()
singularLocusIdeal LightningParametrization := Ideal => P -> (
    if not P.cache#?"singular" then P.cache#"singular" = trim ideal singularLocus closureIdeal P;
    P.cache#"singular"
    )

-- the same ideal in a copy of its ring with every variable of degree 1: degrees of
-- varieties and of generators as usual (the bigrading {deg A, deg V} scales them)
standardGrading = method()
standardGrading Ideal := Ideal => I -> (
    S := ring I;
    if all(degrees S, dg -> dg == {1}) then return I;
    T := newRing(S, Degrees => toList(numgens S : 1));
    (map(T, S, vars T)) I
    )

-- the ideal of the coordinate polynomials in the weight ring (its zeros: the base locus)
baseLocusIdeal = method()
baseLocusIdeal LightningParametrization := Ideal => P -> ideal P#"polynomials"

-- (ideal of the entries of A, ideal of the entries of V) in the weight ring
weightIdeals = method()
weightIdeals LightningParametrization := Sequence => P -> (
    R := P#"weightRing";
    -- the entries of A (= Q^T K for QKV weights): phi = 0 iff A = 0 or V = 0
    IA := ideal flatten entries P#"attentionMatrix";
    IV := ideal flatten entries P#"valueMatrix";
    (IA, IV)
    )

-- closure of the image of {rank A <= RankA, rank V <= RankV} (AV weights)
restrictedClosureIdeal = method(Options => {RankA => 1, RankV => 1})
restrictedClosureIdeal LightningParametrization := Ideal => opts -> P -> (
    if P#"weights" != "AV" then error "restrictedClosureIdeal: needs Weights => \"AV\"";
    key := ("restricted", opts.RankA, opts.RankV);
    if P.cache#?key then return P.cache#key;
    R := P#"weightRing"; A := P#"attentionMatrix"; V := P#"valueMatrix";
    J := ideal(0_R);
    if opts.RankA < numRows A then J = J + minors(opts.RankA + 1, A);
    if opts.RankV < min(numRows V, numColumns V) then J = J + minors(opts.RankV + 1, V);
    R' := R / J;
    P.cache#key = trim kernel map(R', P#"coordinateRing", apply(P#"polynomials", f -> sub(f, R')))
    )

-- the point phi_{A,V} in the coordinate space (Weights => "AV")
pointOf = method()
pointOf(LightningParametrization, Matrix, Matrix) := List => (P, A, V) -> (
    if P#"weights" != "AV" then error "pointOf: needs Weights => \"AV\"";
    d := P#"d"; e := P#"d'";
    if numRows A != d or numColumns A != d then error("pointOf: A must be " | toString d | " x " | toString d);
    if numRows V != e or numColumns V != d then error("pointOf: V must be " | toString e | " x " | toString d);
    R := ambient P#"weightRing";
    kk := coefficientRing R;
    vals := matrix {apply(flatten entries A | flatten entries V, x -> promote(x, kk))};
    apply(P#"polynomials", f -> (map(kk, R, vals)) lift(f, R))
    )

-- rank of the Jacobian matrix of the generators of I at a point (exact over the coefficient field)
jacobianRankAt = method()
jacobianRankAt(Ideal, List) := ZZ => (I, pt) -> (
    S := ring I;
    kk := coefficientRing S;
    rank (map(kk, S, matrix {apply(pt, x -> promote(x, kk))})) jacobian I
    )
-- the same with the parametrization, as fiberComponents(P, pt) takes it: the closure ideal of P at pt
jacobianRankAt(LightningParametrization, List) := ZZ => (P, pt) -> jacobianRankAt(closureIdeal P, pt)

-- {dimension, degree} of each minimal prime of the fiber over a point (affine, in the weight ring)
fiberComponents = method()
fiberComponents(LightningParametrization, List) := List => (P, pt) -> (
    R := P#"weightRing";
    F := ideal apply(#pt, i -> P#"polynomials"#i - promote(pt#i, R));
    sort apply(minimalPrimes F, Q -> {dim Q, degree Q})
    )

-- all equations of the closure of degree <= k in the coordinates: a Groebner basis of
-- the graph ideal, truncated at degree k, in an order eliminating the weights
lowDegreeEquations = method(Options => {AttentionRank => null, CoefficientRing => ZZ/32003, Verify => true})
lowDegreeEquations(LightningParametrization, ZZ) := Ideal => opts -> (P, k) -> (
    if opts.AttentionRank =!= null or opts.CoefficientRing =!= ZZ/32003 then error(
        "lowDegreeEquations(P, k): AttentionRank and CoefficientRing are options of lightningParametrization here ",
        "(or use lowDegreeEquations(d, d', k) for the interpolation)");
    R := P#"weightRing"; S := P#"coordinateRing";
    Rf := ambient R;
    if not isHomogeneous P#"map" then error "lowDegreeEquations: needs Homogenize => true";
    T := (coefficientRing Rf)[gens Rf, gens S, MonomialOrder => {Eliminate numgens Rf}, Degrees => degrees Rf | degrees S];
    toT := map(T, Rf, take(gens T, numgens Rf));
    G := ideal apply(numgens S, i -> T_(numgens Rf + i) - toT lift(P#"polynomials"#i, Rf)) + toT ideal R;
    degA := first first degrees S;
    g := gb(G, DegreeLimit => {degA * k, k});
    eqs := selectInSubring(1, gens g);
    trim ideal (map(S, T, matrix {toList(numgens Rf : 0_S)} | vars S)) eqs
    )

-- names of the reduced coordinates, those of coordinate_names(d, e) in ag-attention's
-- ag_attention/_models/coordinates.py (pinned by tests/data/coordinates.json): q12z13 is the coefficient
-- of z1 z3 in q_{1,2} (q1x12z1x3 once an index reaches 10)
coordinateNames = (d, e) -> (
    sep := if max(d, e) >= 10 then "x" else "";
    flatten flatten apply(d, k -> apply(e, m -> apply(quadraticMonomials d, ij ->
        "q" | toString(k + 1) | sep | toString(m + 1) | "z" | toString(ij#0 + 1) | sep | toString(ij#1 + 1)))))

-- torus weight (alpha, beta, gamma) in Z^d x Z^d' x Z^d of each reduced coordinate x_{k,m,ij}:
-- e_k, e_m, e_i + e_j (rows of A, rows of V, the variables z)
torusWeights = (d, e) -> flatten flatten apply(d, k -> apply(e, m -> apply(quadraticMonomials d, ij ->
    apply(2 * d + e, c -> (if c == k then 1 else 0) + (if c == d + m then 1 else 0)
        + (if c == d + e + ij#0 then 1 else 0) + (if c == d + e + ij#1 then 1 else 0)))))

-- the nonzero rows of the reduced row echelon form of M over a field, sorted by pivot, and the
-- pivots (reducedRowEchelonForm of M2 1.21 over ZZ/p can leave zero rows between the others)
rrefRows = M -> (
    rows := select(entries reducedRowEchelonForm M, row -> any(row, x -> x != 0));
    rows = sort apply(rows, row -> (position(row, x -> x != 0), row));
    (apply(rows, last), apply(rows, first))
    )

-- the monomials of degree D in n variables as nondecreasing lists of indices (ordered by their
-- last index: those of degree D - 1 with last index <= v are a prefix), and their values at the
-- rows of pts (n columns): one column per monomial, x_v * m filled in as diag(pts_v) * (values of m)
monomialValues = (pts, D) -> (
    n := numColumns pts;
    mons := apply(n, v -> {v}); vals := pts;
    for c from 2 to D do (
        count := new MutableList from (n : 0);
        scan(mons, m -> count#(last m) = count#(last m) + 1);
        prefix := accumulate(plus, 0, toList count);
        mons = flatten apply(n, v -> apply(take(mons, prefix#v), m -> append(m, v)));
        vals = fold((x, y) -> x | y, apply(n, v -> diagonalMatrix flatten entries pts_{v} * vals_{0 .. prefix#v - 1}));
        );
    (mons, vals)
    )

-- the minimal generators of degree <= k of the ideal of the closure (reduced coordinates, t >= 2)
-- over ZZ/p, one torus multidegree mu at a time, as ag_attention._algebra.interpolation does modulo one prime
lowDegreeEquations(ZZ, ZZ, ZZ) := Ideal => opts -> (d, e, k) -> (
    if d < 1 then error("lowDegreeEquations: d must be positive, got " | toString d);
    if e < 1 then error("lowDegreeEquations: d' must be positive, got " | toString e);
    if k < 1 then error("lowDegreeEquations: the degree k must be positive, got " | toString k);
    a := opts.AttentionRank;
    if a =!= null and (not instance(a, ZZ) or a < 1) then error("lowDegreeEquations: AttentionRank must be a positive integer, got " | toString a);
    a = if a === null then d else min(a, d);
    kk := opts.CoefficientRing;
    if not (instance(kk, QuotientRing) and ambient kk === ZZ and isPrime char kk) then error(
        "lowDegreeEquations: CoefficientRing must be a prime field ZZ/p (e.g. ZZ/32003), got " | toString kk);
    if not instance(opts.Verify, Boolean) then error "lowDegreeEquations: Verify must be true or false";
    -- the image: A = Q^T K of rank <= a (a polynomial ring of weights), or A free
    P := lightningParametrization(d, e, AttentionRank => a, Weights => (if a < d then "QKV" else "AV"), CoefficientRing => kk);
    R := P#"weightRing";
    polys := matrix {P#"polynomials"};
    n := numColumns polys;
    S := kk[apply(coordinateNames(d, e), varBase)];
    w := torusWeights(d, e);
    lowerBasis := new HashTable; lowerMonomials := new HashTable;
    result := {};
    for D from 1 to k do (
        monos := first monomialValues(matrix {toList(n : 1_kk)}, D);
        blocks := partition(i -> sum(monos#i, v -> w#v), toList(0 .. #monos - 1));
        largest := max apply(values blocks, b -> #b);
        -- #monomials + 20 random points of the image (Python: the same number)
        pts := matrix apply(largest + 20, r -> flatten entries (map(kk, R, random(kk^1, kk^(numgens R)))) polys);
        E := last monomialValues(pts, D);
        levelBasis := new MutableHashTable; levelMonomials := new MutableHashTable;
        gensD := {};
        for mu in sort keys blocks do (
            idx := blocks#mu;
            K := gens ker submatrix(E, , idx);
            if numColumns K == 0 then continue;
            -- I_mu in reduced row echelon form (canonical: independent of the points)
            B := matrix first rrefRows transpose K;
            bmons := monos_idx;
            levelBasis#mu = B; levelMonomials#mu = bmons;
            s := #idx;
            place := hashTable apply(s, i -> bmons#i => i);
            -- x_v * g for g in I_nu, nu = mu - weight(x_v): its coefficient vectors in this block
            products := flatten apply(n, v -> (
                nu := mu - w#v;
                if lowerBasis#?nu
                then {lowerBasis#nu * (id_(kk^s))^(apply(lowerMonomials#nu, m -> place#(sort append(m, v))))}
                else {}));
            G := if #products == 0 then B else (
                (span, pivots) := rrefRows fold((x, y) -> x || y, products);
                if rank(B || matrix span) != numRows B then error(
                    "lowDegreeEquations: products of equations of degree ", toString(D - 1),
                    " do not vanish at the points: unlucky random points; rerun, or use a larger prime");
                -- canonical complement: zero on the pivots of the span, in reduced row echelon form
                if #span == numRows B then null else matrix first rrefRows(B - B_pivots * matrix span));
            if G =!= null then gensD = gensD | flatten entries (matrix {apply(bmons, m -> product(m, v -> S_v))} * transpose G);
            );
        lowerBasis = new HashTable from levelBasis; lowerMonomials = new HashTable from levelMonomials;
        result = result | rsort gensD;
        );
    I := if #result == 0 then ideal map(S^1, S^0, 0) else ideal result;
    if opts.Verify and #result > 0 then (
        -- exact: each generator composed with the parametrization is zero in the weight ring over ZZ/p
        if (map(R, S, P#"polynomials")) gens I != 0 then error(
            "lowDegreeEquations: an equation does not vanish on the parametrization: unlucky random points; ",
            "rerun, or use a larger prime"));
    I
    )

-- the degree of the closure by the closed formula (docs/math/degree.md of ag-attention): the Segre
-- product P(D_r) x P^(dd'-1) under a finite linear projection, divided by the generic fiber;
-- t = 1 uses the symmetric matrices S = A + A^T of rank <= min(2a, d)
closureDegree = method()
closureDegree LightningParametrization := ZZ => P -> (
    d := P#"d"; e := P#"d'"; t := P#"tokens";
    a := if P#"rank" === null then d else min(P#"rank", d);
    n := d * e - 1;
    local domDim; local domDeg; local fiber;
    if t >= 2 then (
        domDim = a * (2 * d - a) - 1;
        domDeg = product(d - a, i -> binomial(d + i, a) / binomial(a + i, a));
        fiber = if e == 1 and a == 1 and d >= 2 then 2 else 1;
        )
    else (
        s := min(2 * a, d);
        domDim = s * (2 * d - s + 1) // 2 - 1;
        domDeg = product(d - s, k -> binomial(d + k, d - s - k) / binomial(2 * k + 1, k));
        fiber = if e == 1 and s == 2 and d >= 2 then 3 else 1;
        );
    value := binomial(domDim + n, n) * domDeg / fiber;
    if denominator value != 1 then error "closureDegree: not an integer (bug)";
    numerator value
    )

-- the loss landscape -----------------------------------------------------------------

-- the critical points of x -> (x - u)^T Q (x - u) on the smooth points of V(I), u generic: the Lagrange
-- conditions Q (x - u) = sum_j lambda_j grad g_j with g_1..g_c random combinations of the generators (c = codim I;
-- at a smooth point of V(I) their gradients span the normal space, for random combinations), and x in V(I).
-- No Rabinowitsch variable is needed for generic u: at a point where the gradients drop rank (singular points of
-- V(I) among them) Q (x - u) must lie in a span of dimension < c, which the u of a set of dimension
-- < dim Sing + c <= n - 1 satisfy; a random u avoids it (docs/math/landscape.md). Unknowns x1..xn, l1..lc.
edSystem = method()
edSystem(Ideal, Matrix, Matrix) := Ideal => (I, Q, u) -> (
    S := ring I;
    kk := coefficientRing S;
    n := numgens S;
    if numRows Q != n or numColumns Q != n then error("edSystem: Q must be " | toString n | " x " | toString n);
    if Q != transpose Q then error "edSystem: Q must be symmetric";
    if numRows u != n or numColumns u != 1 then error("edSystem: u must be a column of " | toString n | " entries");
    c := codim I;
    if c == 0 then error "edSystem: the variety is the whole space (codimension 0)";
    G := (gens I) * random(kk^(numgens I), kk^c);
    N := jacobian G;
    T := kk[toList apply(1..n, i -> getSymbol("x" | toString i)) | toList apply(1..c, j -> getSymbol("l" | toString j))];
    toT := map(T, S, take(gens T, n));
    x := transpose matrix {take(gens T, n)};
    L := transpose matrix {take(gens T, {n, n + c - 1})};
    toT(I) + ideal(sub(Q, T) * (x - sub(u, T)) - (toT N) * L)
    )

-- the number of those critical points: the degree of the zero-dimensional ideal edSystem(I, Q, u)
edDegree = method()
edDegree(Ideal, Matrix, Matrix) := ZZ => (I, Q, u) -> (
    E := edSystem(I, Q, u);
    if dim E > 0 then error "edDegree: the critical ideal is not zero-dimensional (u or Q not generic)";
    degree E
    )

-- the checks of Theorem 3.4 ----------------------------------------------------------

-- does every generator of I vanish at the point pt (exact, over the coefficient field)?
vanishesAt = method()
vanishesAt(Ideal, List) := Boolean => (I, pt) -> (
    S := ring I;
    if #pt != numgens S then error("vanishesAt: the point has " | toString(#pt) | " coordinates, the ring "
        | toString(numgens S) | " variables");
    kk := coefficientRing S;
    (map(kk, S, matrix {apply(pt, x -> promote(x, kk))})) gens I == 0
    )

-- the base locus {phi = 0} as a union of {A = 0} and {V = 0}: "A or V" (Cor. A.1), "A", "V" or "neither"
baseLocusType = method()
baseLocusType LightningParametrization := String => P -> (
    rB := radical baseLocusIdeal P;
    (IA, IV) := weightIdeals P;
    if rB == intersect(IA, IV) then "A or V"
    else if rB == IA then "A"
    else if rB == IV then "V"
    else "neither"
    )

-- at each named point {name, coordinates}: the Jacobian rank of the closure's equations, and whether
-- the point is on the closure and on the closure of the rank-one image (rank A <= 1, rank V <= 1)
evaluatePoints = method()
evaluatePoints(LightningParametrization, List) := List => (P, pts) -> (
    I := closureIdeal P;
    Z := restrictedClosureIdeal P;
    apply(pts, p -> (
        if not (instance(p, List) and #p == 2 and instance(p#0, String) and instance(p#1, List)) then
            error "evaluatePoints: each point must be {name, coordinates}";
        hashTable {
            "name" => p#0,
            "jacobian_rank" => jacobianRankAt(I, p#1),
            "on_closure" => vanishesAt(I, p#1),
            "in_rank_one_closure" => vanishesAt(Z, p#1)}))
    )

-- (value of f(), CPU seconds as a string: jsonEncode sends strings and integers only)
cpuSeconds = f -> (t := cpuTime(); r := f(); (r, toString(cpuTime() - t)))

-- everything ag-attention's reproduce theorem-3.4 computes for one size, as a hash table for jsonEncode
theorem34Checks = method(Options => {LiteralSingularLocus => false})
theorem34Checks(LightningParametrization, List, List) := HashTable => opts -> (P, pts, fbs) -> (
    if P#"weights" != "AV" then error "theorem34Checks: needs Weights => \"AV\"";
    if not instance(opts.LiteralSingularLocus, Boolean) then error "theorem34Checks: LiteralSingularLocus must be true or false";
    (I, tClosure) := cpuSeconds(() -> closureIdeal P);
    Z := restrictedClosureIdeal P;
    (base, tBase) := cpuSeconds(() -> baseLocusType P);
    (evals, tPoints) := cpuSeconds(() -> evaluatePoints(P, pts));
    (fibers, tFibers) := cpuSeconds(() -> apply(fbs, p -> hashTable {"name" => p#0, "components" => fiberComponents(P, p#1)}));
    literal := if opts.LiteralSingularLocus then toList cpuSeconds(() -> radical singularLocusIdeal P == Z) else null;
    J := standardGrading I;
    hashTable {
        "dimension" => dim I,
        "codimension" => codim I,
        "degree" => degree J,
        "generators" => numgens I,
        "generator_degrees" => apply(flatten entries gens J, f -> first degree f),
        "rank_one_dimension" => dim Z,
        "base_locus" => base,
        "points" => evals,
        "fibers" => fibers,
        "literal" => literal,
        "closure_seconds" => tClosure,
        "base_seconds" => tBase,
        "points_seconds" => tPoints,
        "fibers_seconds" => tFibers}
    )

-- JSON for programs: strings, integers, booleans, null, lists, hash tables with string keys
jsonEscape = s -> (
    s = replace("\\\\", "\\\\\\\\", s);
    s = replace("\"", "\\\\\"", s);
    s = replace("\n", "\\\\n", s);
    s = replace("\t", "\\\\t", s);
    "\"" | s | "\""
    )
jsonEncode = method()
jsonEncode String := jsonEscape
jsonEncode ZZ := toString
jsonEncode Boolean := b -> if b then "true" else "false"
jsonEncode Nothing := x -> "null"
jsonEncode List := L -> "[" | demark(",", apply(L, jsonEncode)) | "]"
jsonEncode Sequence := L -> jsonEncode toList L
jsonEncode HashTable := H -> (
    "{" | demark(",", apply(sort keys H, k -> (
        if not instance(k, String) then error "jsonEncode: keys must be strings";
        jsonEscape k | ":" | jsonEncode H#k))) | "}"
    )
jsonEncode Thing := x -> error("jsonEncode: cannot encode an object of class " | toString class x | " (send strings and integers)")

beginDocumentation()

doc ///
  Key
    LightningAttention
  Headline
    neuromanifolds of a lightning self-attention layer
  Description
    Text
      A lightning self-attention layer with attention matrix $A$ ($d\times d$) and value
      matrix $V$ ($d'\times d$) sends a sequence $x_1,\dots,x_t$ to
      $y_i = \sum_j (x_i^T A x_j) V x_j$. For $t\ge 2$ the function is determined by
      the $d\times d'$ array of quadratic forms $q_{k,m}(z) = (A_k\cdot z)(V_m\cdot z)$
      (reduced coordinates); this package builds the parametrization as a ring map and
      computes the Zariski closure of its image (the neuromanifold), its singular locus,
      the base locus, and closures of restricted parametrizations (e.g. rank one).
    Example
      P = lightningParametrization(2, 1)
      I = closureIdeal P
      (dim I, degree I)
    Text
      {\bf Installation.} The package is the single file {\tt LightningAttention.m2}
      ({\tt m2scripts/} in the sources of the Python package ag-attention, and
      {\tt ag_attention/_m2/} in an installed copy of it). To load it into a session
      without installing it:
    Pre
      needsPackage("LightningAttention", FileName => "/path/to/LightningAttention.m2")
    Text
      To install it once, with this documentation, into the user's application directory,
      so that {\tt needsPackage "LightningAttention"} works in every later session:
    Pre
      installPackage("LightningAttention", FileName => "/path/to/LightningAttention.m2")
    Text
      ({\tt M2 -q} and {\tt M2 --script} do not search the application directory: there,
      use the {\tt FileName} form of {\tt needsPackage}.)
      Then {\tt check "LightningAttention"} runs its tests. The option {\tt Weights} of
      @TO lightningParametrization@ is Core's symbol @TO Weights@, so loading the package
      changes nothing in the rest of Macaulay2.
  Subnodes
    lightningParametrization
    LightningParametrization
    coordinatePolynomials
    closureIdeal
    singularLocusIdeal
    baseLocusIdeal
    restrictedClosureIdeal
    pointOf
    fiberComponents
    lowDegreeEquations
    closureDegree
    standardGrading
    vanishesAt
    baseLocusType
    evaluatePoints
    theorem34Checks
    jsonEncode
///

doc ///
  Key
    LightningParametrization
    (net, LightningParametrization)
  Headline
    the parametrization of a lightning self-attention layer
  Description
    Text
      A hash table with keys {\tt "weightRing"}, {\tt "coordinateRing"},
      {\tt "attentionMatrix"}, {\tt "valueMatrix"}, {\tt "polynomials"} and
      {\tt "map"} (the ring map from the coordinate ring to the weight ring).
///

doc ///
  Key
    lightningParametrization
    (lightningParametrization, ZZ, ZZ)
    [lightningParametrization, AttentionRank]
    [lightningParametrization, Tokens]
    [lightningParametrization, Coordinates]
    [lightningParametrization, Weights]
    [lightningParametrization, CoefficientRing]
    [lightningParametrization, Homogenize]
    AttentionRank
    Tokens
    Coordinates
    Homogenize
  Headline
    the parametrization of a lightning layer as a ring map
  Usage
    P = lightningParametrization(d, d')
  Inputs
    d:ZZ
      input width
    d':ZZ
      output width
    AttentionRank => ZZ
      the rank bound $a$ on $A$; {\tt null} for $A$ free
    Tokens => ZZ
      the sequence length $t$ (full coordinates depend on it)
    Coordinates => String
      {\tt "reduced"} ($d d' d(d+1)/2$ coefficients of the forms $q_{k,m}$) or
      {\tt "full"} (coefficients of $y_i$ in the cubic monomials of the inputs)
    Weights => String
      {\tt "AV"} (variables $a_{k,l}, v_{m,l}$; with a rank bound the weight ring is
      the quotient by the $(a+1)$-minors of $A$) or {\tt "QKV"} ($A = Q^T K$)
    CoefficientRing => Ring
      {\tt QQ} or a finite field such as {\tt ZZ/32003}
    Homogenize => Boolean
      grade the coordinate ring by (degree in $A$, degree in $V$) so the map is multihomogeneous
  Outputs
    P:LightningParametrization
  Description
    Example
      P = lightningParametrization(2, 1);
      coordinatePolynomials P
      P' = lightningParametrization(2, 1, AttentionRank => 1, Weights => "QKV", CoefficientRing => ZZ/32003);
      P'#"attentionMatrix"
///

doc ///
  Key
    closureIdeal
    (closureIdeal, LightningParametrization)
  Headline
    the ideal of the Zariski closure of the neuromanifold
  Usage
    I = closureIdeal P
  Inputs
    P:LightningParametrization
  Outputs
    I:Ideal
      the kernel of the parametrization, in the coordinate ring
  Description
    Text
      For $d = 2, d' = 1$ the closure is the hypersurface of the resultant of the two
      binary quadrics $q_1, q_2$.
    Example
      I = closureIdeal lightningParametrization(2, 1);
      (numgens I, first degree I_0, dim I, degree I)
///

doc ///
  Key
    singularLocusIdeal
    (singularLocusIdeal, LightningParametrization)
  Headline
    the ideal of the singular locus of the closure
  Usage
    J = singularLocusIdeal P
  Inputs
    P:LightningParametrization
  Outputs
    J:Ideal
  Description
    Example
      P = lightningParametrization(2, 1);
      J = singularLocusIdeal P;
      radical J == restrictedClosureIdeal P
///

doc ///
  Key
    baseLocusIdeal
    (baseLocusIdeal, LightningParametrization)
    weightIdeals
    (weightIdeals, LightningParametrization)
  Headline
    the base locus of the parametrization
  Usage
    B = baseLocusIdeal P
    (IA, IV) = weightIdeals P
  Inputs
    P:LightningParametrization
  Outputs
    B:Ideal
      generated by the coordinate polynomials, in the weight ring
  Description
    Text
      Theorem 3.4 (Cor. A.1) rests on $\phi_{A,V} = 0$ only when $A = 0$ or $V = 0$.
    Example
      P = lightningParametrization(2, 2);
      (IA, IV) = weightIdeals P;
      radical baseLocusIdeal P == intersect(IA, IV)
///

doc ///
  Key
    restrictedClosureIdeal
    (restrictedClosureIdeal, LightningParametrization)
    [restrictedClosureIdeal, RankA]
    [restrictedClosureIdeal, RankV]
    RankA
    RankV
  Headline
    closure of the image of weights of bounded rank
  Usage
    I = restrictedClosureIdeal(P, RankA => 1, RankV => 1)
  Inputs
    P:LightningParametrization
      with {\tt Weights => "AV"}
  Outputs
    I:Ideal
  Description
    Example
      restrictedClosureIdeal lightningParametrization(2, 1)
///

doc ///
  Key
    coordinatePolynomials
    (coordinatePolynomials, LightningParametrization)
  Headline
    the coordinates of phi as polynomials in the weights
  Usage
    coordinatePolynomials P
  Inputs
    P:LightningParametrization
  Outputs
    :List
///

doc ///
  Key
    pointOf
    (pointOf, LightningParametrization, Matrix, Matrix)
    jacobianRankAt
    (jacobianRankAt, Ideal, List)
    (jacobianRankAt, LightningParametrization, List)
  Headline
    points of the neuromanifold and the Jacobian rank of the closure there
  Usage
    x = pointOf(P, A, V)
    r = jacobianRankAt(I, x)
    r = jacobianRankAt(P, x)
  Inputs
    P:LightningParametrization
      with {\tt Weights => "AV"}
    A:Matrix
    V:Matrix
    I:Ideal
  Outputs
    x:List
      the coordinates of $\phi_{A,V}$
    r:ZZ
      the rank of the Jacobian matrix of the generators of $I$ (with $P$: of {\tt closureIdeal P}, as
      @TO fiberComponents@ takes $P$) at $x$; at points of the closure it is the codimension exactly at
      smooth points
  Description
    Example
      P = lightningParametrization(2, 1);
      I = closureIdeal P;
      x = pointOf(P, matrix {{1, 0}, {0, 0}}, matrix {{0, 1}});
      (jacobianRankAt(I, x), codim I)
///

doc ///
  Key
    fiberComponents
    (fiberComponents, LightningParametrization, List)
  Headline
    the components of a fiber of the parametrization
  Usage
    fiberComponents(P, x)
  Inputs
    P:LightningParametrization
    x:List
      a point in the coordinate space
  Outputs
    :List
      of pairs {dimension, degree}, one for each minimal prime of the fiber
  Description
    Text
      Theorem 3.2: generic fibers are the rescalings $(cA, V/c)$ (one curve); rank-one pairs
      have two (pair and swap).
    Example
      P = lightningParametrization(2, 2);
      fiberComponents(P, pointOf(P, matrix {{1, 0}, {0, 1}}, matrix {{1, 1}, {0, 1}}))
      fiberComponents(P, pointOf(P, matrix {{1, 0}, {0, 0}}, matrix {{0, 1}, {0, 0}}))
///

doc ///
  Key
    lowDegreeEquations
    (lowDegreeEquations, ZZ, ZZ, ZZ)
    (lowDegreeEquations, LightningParametrization, ZZ)
    [lowDegreeEquations, AttentionRank]
    [lowDegreeEquations, CoefficientRing]
    [lowDegreeEquations, Verify]
  Headline
    the minimal generators of degree at most k of the ideal of the closure
  Usage
    I = lowDegreeEquations(d, d', k)
    I = lowDegreeEquations(d, d', k, AttentionRank => a, CoefficientRing => ZZ/p, Verify => true)
    J = lowDegreeEquations(P, k)
  Inputs
    d:ZZ
      input width ($A$ is $d\times d$)
    d':ZZ
      output width ($V$ is $d'\times d$)
    k:ZZ
      the largest degree examined
    P:LightningParametrization
      any parametrization built with {\tt Homogenize => true} (second form)
    AttentionRank => ZZ
      the rank bound $a$ on $A$; {\tt null} (the default) for $A$ free. First form only
      (for the second, set it in @TO lightningParametrization@)
    CoefficientRing => Ring
      a prime field {\tt ZZ/p}, by default {\tt ZZ/32003}. First form only
    Verify => Boolean
      whether to check that every generator vanishes on the parametrization, by exact
      substitution into the polynomial ring of the weights over {\tt ZZ/p}. First form only
  Outputs
    I:Ideal
      in the ring {\tt ZZ/p[q11z11, q11z12, ...]} of the reduced coordinates, with every variable
      of degree 1; its generators {\tt I_*} are all minimal generators of degree at most $k$ of the
      ideal of the closure (over {\tt ZZ/p}), sorted by degree
    J:Ideal
      in the coordinate ring of {\tt P}: generated by all elements of the closure ideal of degree at most $k$
  Description
    Text
      {\bf By interpolation} (the first form, {\tt lowDegreeEquations(d, d', k)}), the computation of
      {\tt low_degree_equations} in ag-attention's {\tt ag_attention/_algebra/low_degree.py},
      modulo one prime. The reduced coordinate $x_{k,m,ij}$ ($i \le j$) is the coefficient of
      $z_i z_j$ in $q_{k,m}(z) = (A_k\cdot z)(V_m\cdot z)$, for one layer with $t \ge 2$ tokens;
      the variables are named as in Python's {\tt coordinate_names(d, e)}: {\tt q12z13} is the
      coefficient of $z_1 z_3$ in $q_{1,2}$ ({\tt q1x12z1x3} once $d$ or $d'$ reaches 10), in the
      order of @TO coordinatePolynomials@ for {\tt Coordinates => "reduced"}. The names do not
      touch the user's symbols: reach a variable by its name as {\tt (ring I)_"q12z13"}.

      The symmetries $A \to S A W$, $V \to U V W$ with diagonal $S, U, W$ make the ideal
      homogeneous for the torus grading: $x_{k,m,ij}$ has multidegree
      $(e_k, e_m, e_i + e_j)$ in $\mathbb{Z}^d \times \mathbb{Z}^{d'} \times \mathbb{Z}^d$. In each multidegree
      $\mu$ of degree $D \le k$ the component $I_\mu$ is the kernel of the evaluation of the
      monomials of multidegree $\mu$ at $N$ random points of the image ($N$ = the largest number
      of such monomials in degree $D$, plus 20; $A = Q^T K$ of rank at most $a$). The minimal
      generators of degree $D$ in $\mu$ are a complement of the span of the products
      $x_v g$, $g$ in the components of degree $D - 1$: the canonical one (zero on the pivots of
      that span, in reduced row echelon form, monomials in decreasing order), so the result does
      not depend on the random points.

      Random points can only make a kernel too large, never too small: every equation is found.
      With {\tt Verify => true} (the default) every generator is substituted into the
      parametrization, so the result is exact: {\tt I_*} are exactly the minimal generators of
      degree at most $k$ of the ideal, over {\tt ZZ/p}, of the closure of the image (over the
      algebraic closure of {\tt ZZ/p}); an unlucky sample (probability at most about
      $2Ds/p$ for a block of $s$ monomials) is an error, not a wrong answer. For a good prime
      the counts are those of the ideal over {\tt QQ} (Python lifts the same canonical generators
      to {\tt QQ} by the Chinese remainder theorem). For $k$ at least the largest degree of a
      minimal generator, {\tt I} is the whole ideal; which $k$ suffices is not decided here.
      The cost grows with the number of monomials of degree $k$ in the $n = d d' d(d+1)/2$
      coordinates, all of which are enumerated: for $(3, 2, 3)$ ($n = 36$) and $k = 4$ the
      45 + 80 + 675 generators of Python took 132 s of CPU here.

      For $d = 2$, $d' = 2$ the 5 quadrics are the coefficients (in $z$) of the quartic form
      $q_{1,2} q_{2,1} - q_{1,1} q_{2,2}$, the $2\times 2$ minor of the matrix of quadratic forms
      $(q_{k,m})$; with the 10 quartics they generate the ideal:
    Example
      I = lowDegreeEquations(2, 2, 4);
      tally apply(I_*, f -> first degree f)
      I_0
      P = lightningParametrization(2, 2, CoefficientRing => ZZ/32003);
      sub(closureIdeal P, vars ring I) == I
    Text
      With a rank bound: for $d = 3$, $d' = 1$, $a = 1$ the 45 quadrics and 10 cubics. For
      $(d, d', a) = (3, 2, 3)$, where the kernel does not finish, {\tt lowDegreeEquations(3, 2, 3)}
      finds the same 45 quadrics and 80 cubics as Python, in a few seconds.
    Example
      J = lowDegreeEquations(3, 1, 3, AttentionRank => 1);
      tally apply(J_*, f -> first degree f)
    Text
      {\bf By elimination} (the second form, {\tt lowDegreeEquations(P, k)}): a Groebner basis
      of the graph ideal truncated at degree $k$, in an order eliminating the weights; it works
      for every parametrization @TO lightningParametrization@ builds (full coordinates, one
      token, {\tt QQ}), in its coordinate ring, and is slower: for $(3, 2, 3)$ and $k = 3$ the same
      125 equations took 21 s of CPU here, against 3.5 s by interpolation.
    Example
      P = lightningParametrization(2, 2);
      J = lowDegreeEquations(P, 2);
      (numgens J, J == closureIdeal P)
  SeeAlso
    closureIdeal
    closureDegree
///

doc ///
  Key
    jsonEncode
    (jsonEncode, Thing)
    (jsonEncode, String)
    (jsonEncode, ZZ)
    (jsonEncode, Boolean)
    (jsonEncode, Nothing)
    (jsonEncode, List)
    (jsonEncode, Sequence)
    (jsonEncode, HashTable)
  Headline
    JSON text of strings, integers, booleans, lists and string-keyed hash tables
  Usage
    jsonEncode x
  Inputs
    x:Thing
  Outputs
    :String
  Description
    Example
      jsonEncode hashTable {"dim" => 5, "gens" => {"c_1*c_2", "a\"b"}}
///

doc ///
  Key
    edDegree
    (edDegree, Ideal, Matrix, Matrix)
  Headline
    the number of critical points of a squared distance on the smooth points of a variety
  Usage
    edDegree(I, Q, u)
  Inputs
    I:Ideal
      the ideal of the variety (prime), over a field
    Q:Matrix
      a symmetric $n\times n$ matrix over the coefficient field: the form the distance is measured with
    u:Matrix
      an $n\times 1$ matrix: the data point
  Outputs
    :ZZ
      the number of complex critical points of $x \mapsto (x-u)^T Q (x-u)$ on the smooth points of
      $V(I)$: for generic $u$ and $Q$ the generic Euclidean distance degree, for $Q = 1$ the Euclidean one
  Description
    Text
      The degree of the zero-dimensional ideal @TO edSystem@: the Lagrange conditions
      $Q(x-u) = \sum_j \lambda_j \nabla g_j$, with $g_1,\dots,g_c$ random combinations of the generators
      ($c$ the codimension; at a smooth point their gradients span the normal space), and $x \in V(I)$.
      For generic $u$ no solution lies where the gradients drop rank (the singular points among them),
      so nothing needs removing. Random choices come from the random seed; for a count of the generic
      problem, take $u$ (and $Q$) random. ag-attention counts the same system with msolve
      ({\tt ed-degree --method m2}), which is faster than {\tt degree} here. The loss of a one-layer lightning network on data is such a distance
      ({\tt ag-attention ed-degree --metric data}).
    Example
      setRandomSeed 0;
      P = lightningParametrization(2, 1, CoefficientRing => ZZ/32003);
      I = standardGrading closureIdeal P;
      kk = ZZ/32003; u = random(kk^6, kk^1);
      edDegree(I, id_(kk^6), u)
///

doc ///
  Key
    edSystem
    (edSystem, Ideal, Matrix, Matrix)
  Headline
    the Lagrange conditions of the critical points of a squared distance on a variety
  Usage
    edSystem(I, Q, u)
  Inputs
    I:Ideal
      the ideal of the variety (prime), over a field, of codimension $c > 0$
    Q:Matrix
      a symmetric $n\times n$ matrix over the coefficient field
    u:Matrix
      an $n\times 1$ matrix: the data point
  Outputs
    :Ideal
      in the unknowns $x_1,\dots,x_n,l_1,\dots,l_c$: $I(x)$ and $Q(x-u) = \sum_j l_j \nabla g_j(x)$,
      $g_1,\dots,g_c$ random combinations of the generators of $I$; zero-dimensional for generic $u$,
      of degree the number of critical points (@TO edDegree@)
  Description
    Example
      setRandomSeed 0;
      kk = ZZ/32003;
      I = standardGrading closureIdeal lightningParametrization(2, 1, CoefficientRing => kk);
      E = edSystem(I, id_(kk^6), random(kk^6, kk^1));
      (numgens ring E, dim E, degree E)
///

doc ///
  Key
    standardGrading
    (standardGrading, Ideal)
  Headline
    an ideal in a copy of its ring with all variables of degree 1
  Usage
    J = standardGrading I
  Inputs
    I:Ideal
  Outputs
    J:Ideal
  Description
    Text
      The coordinate ring is graded by (degree in $A$, degree in $V$), which makes the
      parametrization homogeneous but scales degrees for {\tt Weights => "QKV"}
      ($A = Q^T K$ has degree 2). Use this ideal for the degree of the closure and of
      its generators.
    Example
      P = lightningParametrization(2, 1, Weights => "QKV", AttentionRank => 2);
      I = closureIdeal P;
      (degree I, degree standardGrading I)
///

TEST ///
  -- ED degrees published with other people's code: coreysharris/EDD-M2 (commit 8d9b973, its TEST blocks: the
  -- twisted cubic 7, the Veronese surface 13) and arXiv 2512.21016 (GiacGraz/ed-degree-metric-dependence: the
  -- symmetric 3 x 3 determinant, 13 critical points for a generic metric, 3 for Bombieri-Weyl); the twisted
  -- cubic with the weights binomial(3, i): 3 (Draisma et al. 2016)
  kk = ZZ/32003; setRandomSeed 1;
  R = kk[x_0..x_3];
  I = minors(2, matrix{{x_0, x_1, x_2}, {x_1, x_2, x_3}});
  u = random(kk^4, kk^1);
  assert(edDegree(I, id_(kk^4), u) == 7)
  assert(edDegree(I, diagonalMatrix(kk, {1, 3, 3, 1}), u) == 3)
  S = kk[s_0..s_5];
  M = matrix{{s_0, s_1, s_2}, {s_1, s_3, s_4}, {s_2, s_4, s_5}};
  v = random(kk^6, kk^1);
  G = random(kk^6, kk^6); G = G + transpose G;
  assert(edDegree(ideal det M, G, v) == 13)
  assert(edDegree(ideal det M, diagonalMatrix(kk, {1, 2, 2, 1, 2, 1}), v) == 3)
  assert(edDegree(minors(2, M), id_(kk^6), v) == 13)
///

TEST ///
  setRandomSeed 0
  P = lightningParametrization(2, 1)
  assert(numgens P#"coordinateRing" == 6)
  I = closureIdeal P
  assert(numgens I == 1)
  assert(first degree I_0 == 4)
  assert(dim I == 5 and degree I == 4)
  -- the singular locus is cut out by the 2x2 minors of [[c1 c2 c3],[c4 c5 c6]] (docs/math/model.md, model-smallest-example)
  S = ring I
  M = matrix {{S_0, S_1, S_2}, {S_3, S_4, S_5}}
  assert(radical singularLocusIdeal P == minors(2, M))
  assert(restrictedClosureIdeal P == minors(2, M))
///

TEST ///
  -- the ED degree of d = 2, d' = 1 (a quartic hypersurface): 6 for the identity form, 14 for a generic one
  -- (ag-attention's count in the weights gives the same, docs/math/landscape.md)
  setRandomSeed 0
  kk = ZZ/32003
  I = standardGrading closureIdeal lightningParametrization(2, 1, CoefficientRing => kk)
  u = random(kk^6, kk^1)
  assert(edDegree(I, id_(kk^6), u) == 6)
  Q = random(kk^6, kk^6); Q = Q + transpose Q
  assert(edDegree(I, Q, u) == 14)
///

TEST ///
  -- full coordinates (t = 2) give the same dimension and degree
  P = lightningParametrization(2, 1, Coordinates => "full", Tokens => 2)
  assert(numgens P#"coordinateRing" == 20)
  I = closureIdeal P
  assert(dim I == 5 and degree I == 4)
///

TEST ///
  -- no base points: phi = 0 only if A = 0 or V = 0 (Cor. A.1)
  P = lightningParametrization(2, 2)
  (IA, IV) = weightIdeals P
  assert(radical baseLocusIdeal P == intersect(IA, IV))
///

TEST ///
  -- QKV weights: the same closure as AV, degrees in the standard grading
  P = lightningParametrization(2, 1, Weights => "QKV", AttentionRank => 2)
  I = standardGrading closureIdeal P
  assert(dim I == 5 and degree I == 4 and first degree I_0 == 4)
  (IA, IV) = weightIdeals P
  assert(radical baseLocusIdeal P == intersect(IA, IV))
  P1 = lightningParametrization(2, 1, Weights => "QKV", AttentionRank => 1)
  P1' = lightningParametrization(2, 1, AttentionRank => 1)
  assert(degree standardGrading closureIdeal P1 == degree standardGrading closureIdeal P1')
  (IA, IV) = weightIdeals P1
  assert(radical baseLocusIdeal P1 == intersect(IA, IV))
///

TEST ///
  -- QKV with a = 1 over a finite field: closure of rank-one A
  P = lightningParametrization(2, 1, AttentionRank => 1, Weights => "QKV", CoefficientRing => ZZ/32003)
  I = closureIdeal P
  assert(dim I == 4)
  P' = lightningParametrization(2, 1, AttentionRank => 1, CoefficientRing => ZZ/32003)
  assert(dim closureIdeal P' == 4)
///

TEST ///
  -- points, Jacobian ranks, fibers, low-degree equations
  P = lightningParametrization(2, 2)
  I = closureIdeal P
  generic = pointOf(P, matrix {{1, 2}, {3, 5}}, matrix {{1, 1}, {2, 7}})
  rankone = pointOf(P, matrix {{1, 0}, {0, 0}}, matrix {{0, 1}, {0, 0}})
  assert(jacobianRankAt(I, generic) == codim I)
  assert(jacobianRankAt(I, rankone) < codim I)
  assert(jacobianRankAt(P, generic) == jacobianRankAt(I, generic) and jacobianRankAt(P, rankone) == jacobianRankAt(I, rankone))
  assert(fiberComponents(P, generic) == {{1, 2}})
  assert(fiberComponents(P, rankone) == {{1, 2}, {1, 2}})
  assert(lowDegreeEquations(P, 4) == I)
///

TEST ///
  -- the user's variables named like the weights are left alone
  a = 5; v = 7
  P = lightningParametrization(2, 1, Weights => "QKV", AttentionRank => 1)
  assert(a == 5 and v == 7)
  assert(toString first gens P#"weightRing" == "q_(1,1)")
///

TEST ///
  -- loading the package leaves Core's option Weights alone: weighted rings still work,
  -- and lightningParametrization takes the same symbol as its option
  R = QQ[x, y, Weights => {3, 1}]
  assert(leadTerm(x + y^2) == x)
  assert(package Weights === Core)
  P = lightningParametrization(2, 1, Weights => "QKV", AttentionRank => 1)
  assert(P#"weights" == "QKV")
///

doc ///
  Key
    closureDegree
    (closureDegree, LightningParametrization)
  Headline
    the degree of the Zariski closure by the closed formula, without a Groebner basis
  Usage
    closureDegree P
  Inputs
    P:LightningParametrization
  Outputs
    :ZZ
      the degree of the closure of the neuromanifold (an affine cone)
  Description
    Text
      For $t \ge 2$ every reduced coordinate is linear in $A \otimes V$, so the projective
      closure is the image of the Segre embedding of $P(D_r) \times P^{dd'-1}$ ($D_r$: the
      $d \times d$ matrices of rank at most $r = \min(a, d)$) under a linear projection whose
      centre misses it. A finite projection multiplies the degree by the degree of the map:
      1, except for $d' = 1$, $a = 1$, where the map is 2:1. For $t = 1$ only $S = A + A^T$
      is seen, and symmetric matrices of rank at most $\min(2a, d)$ replace $D_r$ (the map
      is 3:1 for $d' = 1$ and rank 2). The proof and its hypotheses are in ag-attention's
      docs/math/degree.md. The result needs no Groebner basis, so it reaches any size.
    Example
      closureDegree lightningParametrization(3, 2)
      closureDegree lightningParametrization(3, 1, AttentionRank => 1)
      P = lightningParametrization(2, 1);
      closureDegree P == degree standardGrading closureIdeal P
///

TEST ///
  -- the formula against the kernel, where the kernel finishes: t >= 2, the 2:1 case, t = 1 (3:1 and 1:1)
  for dea in {{2, 1, null}, {2, 1, 1}, {2, 2, null}, {3, 1, 1}, {2, 3, 1}} do (
      P := lightningParametrization(dea#0, dea#1, AttentionRank => dea#2, CoefficientRing => ZZ/32003);
      assert(closureDegree P == degree standardGrading closureIdeal P));
  for dea in {{2, 1, 1}, {2, 2, 1}} do (
      P := lightningParametrization(dea#0, dea#1, AttentionRank => dea#2, Tokens => 1, Coordinates => "full",
          CoefficientRing => ZZ/32003);
      assert(closureDegree P == degree standardGrading closureIdeal P));
  assert(closureDegree lightningParametrization(3, 2) == 1287)
  assert(closureDegree lightningParametrization(3, 2, AttentionRank => 1) == 756)
///

TEST ///
  -- lowDegreeEquations by interpolation against the kernel (closureIdeal) and the truncated
  -- elimination, over the same ZZ/32003, on sizes whose generators all have degree <= k (and on
  -- {2, 3, 2, 4}: ag-attention's tests/m2/test_jobs.py, a slow test)
  kk = ZZ/32003
  for deak in {{2, 1, 2, 4}, {2, 1, 1, 2}, {2, 2, 2, 4}, {2, 2, 1, 4}, {3, 1, 1, 3}} do (
      I := lowDegreeEquations(deak#0, deak#1, deak#3, AttentionRank => deak#2);
      assert(char ring I == 32003 and numgens ring I == deak#0 * deak#1 * binomial(deak#0 + 1, 2));
      P := lightningParametrization(deak#0, deak#1, AttentionRank => deak#2, CoefficientRing => kk);
      K := sub(closureIdeal P, vars ring I);
      assert(I == K);
      assert(numgens I == numgens K); -- minimal: as many generators as the trimmed kernel
      assert(sub(lowDegreeEquations(P, deak#3), vars ring I) == I));
///

TEST ///
  -- the counts of ag-attention's Python low_degree_equations (reduced coordinates, t >= 2):
  -- (3,2,3), max_degree=3: {1: 0, 2: 45, 3: 80}; (3,1,3), max_degree=4: {1: 0, 2: 0, 3: 20, 4: 90};
  -- here up to degree 2 and 3 (the next degrees: ag-attention's tests/m2/test_jobs.py, a slow test)
  I = lowDegreeEquations(3, 2, 2)
  assert(tally apply(I_*, f -> first degree f) === tally toList(45 : 2))
  S = ring I
  -- the names of coordinate_names(3, 2), in its order
  assert(numgens S == 36 and toString S_0 == "q11z11" and toString S_7 == "q12z12" and toString S_35 == "q32z33")
  assert(S_"q12z13" == S_8)
  J = lowDegreeEquations(3, 1, 3, AttentionRank => 3)
  assert(tally apply(J_*, f -> first degree f) === tally toList(20 : 3))
///

TEST ///
  -- lowDegreeEquations: no equations, Verify => false, another prime, names past 9, bad arguments
  I = lowDegreeEquations(2, 1, 3)
  assert(numgens I == 0 and numgens ring I == 6)
  I = lowDegreeEquations(2, 2, 2, Verify => false, CoefficientRing => ZZ/101)
  assert(numgens I == 5 and char ring I == 101)
  assert(toString first gens ring lowDegreeEquations(10, 1, 1) == "q1x1z1x1")
  assert(try (lowDegreeEquations(2, 1, 2, CoefficientRing => QQ); false) else true)
  assert(try (lowDegreeEquations(2, 1, 0); false) else true)
  assert(try (lowDegreeEquations(lightningParametrization(2, 1), 2, AttentionRank => 1); false) else true)
///

TEST ///
  assert(jsonEncode hashTable {"a" => {1, "x\"y"}, "b" => null, "c" => true} == "{\"a\":[1,\"x\\\"y\"],\"b\":null,\"c\":true}")
  assert(try (jsonEncode (1/2); false) else true)
///

doc ///
  Key
    vanishesAt
    (vanishesAt, Ideal, List)
  Headline
    whether every generator of an ideal vanishes at a point
  Usage
    vanishesAt(I, x)
  Inputs
    I:Ideal
      in a polynomial ring over a field
    x:List
      the coordinates of a point, one per variable of {\tt ring I}
  Outputs
    :Boolean
      whether $x$ is a zero of $I$, decided exactly over the coefficient field
  Description
    Text
      A point of the neuromanifold satisfies the equations of its closure; the point of
      $z_1^2, z_2^2$ (no common root) does not.
    Example
      P = lightningParametrization(2, 1);
      I = closureIdeal P;
      vanishesAt(I, pointOf(P, matrix {{1, 2}, {3, 5}}, matrix {{1, 1}}))
      vanishesAt(I, {1, 0, 0, 0, 0, 1})
  SeeAlso
    jacobianRankAt
    evaluatePoints
///

doc ///
  Key
    baseLocusType
    (baseLocusType, LightningParametrization)
  Headline
    the base locus of the parametrization as a union of A = 0 and V = 0
  Usage
    baseLocusType P
  Inputs
    P:LightningParametrization
  Outputs
    :String
      {\tt "A or V"} if the radical of @TO baseLocusIdeal@ is the ideal of
      $\{A = 0\} \cup \{V = 0\}$ (Cor. A.1: no base points outside them), {\tt "A"} or
      {\tt "V"} if it is the ideal of one of them, {\tt "neither"} otherwise
  Description
    Text
      Theorem 3.4 (1), the neuromanifold is closed in the Euclidean topology, rests on
      $\phi_{A,V} = 0$ only when $A = 0$ or $V = 0$: then the parametrization descends to
      a morphism of projective spaces.
    Example
      baseLocusType lightningParametrization(2, 2)
      baseLocusType lightningParametrization(2, 1, AttentionRank => 1)
  SeeAlso
    baseLocusIdeal
    weightIdeals
///

doc ///
  Key
    evaluatePoints
    (evaluatePoints, LightningParametrization, List)
  Headline
    Jacobian rank of the closure and membership in the rank-one closure at named points
  Usage
    evaluatePoints(P, {{name, x}, ...})
  Inputs
    P:LightningParametrization
      with {\tt Weights => "AV"}
    :List
      of pairs {\tt \{name, x\}}: a string and the coordinates of a point
  Outputs
    :List
      one hash table per point, with keys {\tt "name"}, {\tt "jacobian_rank"} (the rank of
      the Jacobian matrix of the generators of @TO closureIdeal@ at $x$), {\tt "on_closure"}
      and {\tt "in_rank_one_closure"} (whether $x$ satisfies the equations of the closure,
      and of the closure of the image of $\mathrm{rank}\, A \le 1$, $\mathrm{rank}\, V \le 1$:
      @TO restrictedClosureIdeal@)
  Description
    Text
      At a point of the closure the Jacobian rank is the codimension exactly where the point
      is smooth. Theorem 3.4 (3): the singular points are those of the rank-one closure.
    Example
      P = lightningParametrization(2, 1);
      codim closureIdeal P
      evaluatePoints(P, {{"generic", pointOf(P, matrix {{1, 2}, {3, 5}}, matrix {{1, 1}})},
          {"rank one", pointOf(P, matrix {{1, 0}, {0, 0}}, matrix {{0, 1}})}})
  SeeAlso
    jacobianRankAt
    vanishesAt
    theorem34Checks
///

doc ///
  Key
    theorem34Checks
    (theorem34Checks, LightningParametrization, List, List)
    [theorem34Checks, LiteralSingularLocus]
    LiteralSingularLocus
  Headline
    the computations behind ag-attention's reproduction of Theorem 3.4 for one size
  Usage
    theorem34Checks(P, points, fibers, LiteralSingularLocus => false)
  Inputs
    P:LightningParametrization
      with {\tt Weights => "AV"}
    points:List
      of pairs {\tt \{name, x\}} for @TO evaluatePoints@
    fibers:List
      of pairs {\tt \{name, x\}}: points whose fibers are decomposed by @TO fiberComponents@
    LiteralSingularLocus => Boolean
      also compare the radical of @TO singularLocusIdeal@ with the rank-one closure
      (feasible for $d = 2$, $d' = 1$ only)
  Outputs
    :HashTable
      with string keys, ready for @TO jsonEncode@: {\tt "dimension"}, {\tt "codimension"},
      {\tt "degree"} (in the standard grading), {\tt "generators"} and
      {\tt "generator_degrees"} of the closure; {\tt "rank_one_dimension"}; {\tt "base_locus"}
      (@TO baseLocusType@); {\tt "points"} (@TO evaluatePoints@); {\tt "fibers"} (name and
      components); {\tt "literal"} ({\tt null}, or whether the two radicals agree and the CPU
      seconds); the CPU seconds of each part as strings ({\tt "closure_seconds"},
      {\tt "base_seconds"}, {\tt "points_seconds"}, {\tt "fibers_seconds"})
  Description
    Text
      The Python package sends one such call per size (orbit representatives, random points
      of each stratum, the fiber points) and checks the answer against the predictions of the
      paper. The seconds are strings because @TO jsonEncode@ sends only strings and integers.
    Example
      P = lightningParametrization(2, 1);
      x = pointOf(P, matrix {{1, 0}, {0, 0}}, matrix {{0, 1}});
      H = theorem34Checks(P, {{"rank one", x}}, {{"rank one", x}}, LiteralSingularLocus => true);
      (H#"dimension", H#"degree", H#"base_locus", H#"literal"#0)
      H#"points"
      H#"fibers"
  SeeAlso
    evaluatePoints
    baseLocusType
    fiberComponents
    jsonEncode
///

TEST ///
  setRandomSeed 0
  -- vanishesAt: points of the closure and a point off it; a wrong number of coordinates
  P = lightningParametrization(2, 1)
  I = closureIdeal P
  assert vanishesAt(I, pointOf(P, matrix {{1, 2}, {3, 5}}, matrix {{1, 1}}))
  assert vanishesAt(I, pointOf(P, random(QQ^2, QQ^2), random(QQ^1, QQ^2)))
  assert not vanishesAt(I, {1, 0, 0, 0, 0, 1})
  assert(try (vanishesAt(I, {1, 2}); false) else true)
///

TEST ///
  setRandomSeed 0
  -- baseLocusType: Cor. A.1 with A free and with a rank bound
  assert(baseLocusType lightningParametrization(2, 1) == "A or V")
  assert(baseLocusType lightningParametrization(2, 2, AttentionRank => 1) == "A or V")
///

TEST ///
  setRandomSeed 0
  -- evaluatePoints: smooth at a generic point, singular and in the rank-one closure at rank one
  P = lightningParametrization(2, 2)
  c = codim closureIdeal P
  E = evaluatePoints(P, {{"generic", pointOf(P, matrix {{1, 2}, {3, 5}}, matrix {{1, 1}, {2, 7}})},
      {"rank one", pointOf(P, matrix {{1, 0}, {0, 0}}, matrix {{0, 1}, {0, 0}})}})
  assert(apply(E, e -> e#"name") == {"generic", "rank one"})
  assert(E#0#"jacobian_rank" == c and E#0#"on_closure" and not E#0#"in_rank_one_closure")
  assert(E#1#"jacobian_rank" < c and E#1#"on_closure" and E#1#"in_rank_one_closure")
  assert(try (evaluatePoints(P, {{1, 2}}); false) else true)
///

TEST ///
  setRandomSeed 0
  -- theorem34Checks on d = 2, d' = 1: the quartic, no base points, Sing = rank-one closure
  P = lightningParametrization(2, 1)
  generic = pointOf(P, matrix {{1, 2}, {3, 5}}, matrix {{1, 1}})
  crit = pointOf(P, matrix {{1, 1}, {1, 1}}, matrix {{1, 1}})
  H = theorem34Checks(P, {{"generic", generic}, {"critical", crit}}, {{"generic", generic}, {"zero", toList(6 : 0)}},
      LiteralSingularLocus => true)
  assert(H#"dimension" == 5 and H#"codimension" == 1 and H#"degree" == 4 and H#"generator_degrees" == {4})
  assert(H#"rank_one_dimension" == 4 and H#"base_locus" == "A or V")
  assert(H#"literal"#0 and instance(value H#"literal"#1, RR))
  assert(apply(H#"points", e -> e#"jacobian_rank") == {1, 0})
  assert(apply(H#"fibers", f -> (f#"name", f#"components")) == {("generic", {{1, 2}}), ("zero", {{2, 1}, {4, 1}})})
  assert(instance(jsonEncode H, String))
  assert((theorem34Checks(P, {}, {}))#"literal" === null)
  assert(try (theorem34Checks(lightningParametrization(2, 1, Weights => "QKV", AttentionRank => 1), {}, {}); false) else true)
///

end--
