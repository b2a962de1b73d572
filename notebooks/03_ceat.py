# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 3. CEAT and the length of the context
#
# The Contextualized Embedding Association Test (Guo & Caliskan 2021) measures a WEAT
# on contextual word vectors. A word has one vector per occurrence, so CEAT draws N
# samples: sample i takes one occurrence vector of every word of X, Y, A, B and gives a
# WEAT effect size d_i (ddof = 1) with in-sample variance V_i (the variance of s over
# X ∪ Y). The N effect sizes are pooled by a random-effects model: DerSimonian–Laird
# between-sample variance τ² = (Q − (N−1))/c when Q ≥ N − 1 (else 0), weights
# v_i = 1/(V_i + τ²), combined effect size CES = Σ v_i d_i / Σ v_i, SE = sqrt(1/Σ v_i) and
# the two-tailed p = 2·(1 − Φ(|CES/SE|)) of seed 000 (App. D).
#
# Sadhu et al. (2024, seed 000 §3.2, §5.1) ask how CES depends on the context the model
# sees: occurrences are cut to *segments* of 9, 25, 75 words centred on the word, or the
# whole sentence (">75"), and each length gets its own CEAT. A **fixed** sample set uses
# the same occurrences at every length (and for every model); a **random** set draws
# anew for each length.
#
# Offline default: the embedded `minilm-l6` (all-MiniLM-L6-v2) over English corpora the
# project generates, where each sentence of 8–100 words holds one male or female term next
# to one career or family word, with the stereotypical pairing planted at strength p
# (0.9), none (0.5) or reversed (0.1); neutral clauses fill the rest of the sentence. The
# known answer: CES grows with p at every segment length. MiniLM brings its own prior
# (male–career), so the p = 0.5 row is the baseline the planted rows move away from.
# With `corpus` set, the same study runs on a real corpus with a word-list test file.
# In Bangla the default is the study's own C1–C9 (`wordlist_file="seed000"`: the authors'
# `ceat1..9.jsonl`, each word with its own suffix list from their suffix files, NFKC as
# their normaliser); `wordlist_file="weat.yaml"` runs the project's own Bangla lists.
#
# Offline in Bangla and Hindi, `model: planted-static` runs the study on the language's
# own lists with a known-answer encoder (`polybias.planted.static`): generated sentences
# hold one target and one attribute of a test (paired as the lists pair them with
# probability p) among neutral filler clauses, and an occurrence's vector is the word's
# planted static vector (drawn towards A for X, towards B for Y) plus half the mean
# static vector of the other words of its segment. Every test must show a large positive
# CES at every segment length; the encoder is analytic, the same on every machine.

# %% tags=["parameters"]
model: str = "minilm-l6"  # registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id; planted-static: an analytic contextual encoder over a table planted from the word lists (bn, hi)
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
language: str = "en"  # language of the corpus and word lists
language_override: bool = False  # run a registered model on a language its entry does not list (recorded in the run)
corpus: str = ""  # text file or folder to extract sentences from; empty: generated planted corpora
wordlist_file: str = ""  # word lists (used with corpus); empty: the language's default (bn: seed000, the study's own C1-C9; else weat.yaml); weat.yaml: the project's lists
tests: list = []  # tests of wordlist_file to run (used with corpus); empty: all
planted_p: list = [0.9, 0.5, 0.1]  # planted association strengths, one generated corpus each (each in [0, 1])
n_sentences: int = 300  # sentences per generated corpus (at least 1)
n_words: int = 4  # words per set of the planted test (male, female, career, family; at least 1)
lengths: list = [9, 25, 75, ">75"]  # segment lengths in words; ">75": the whole sentence
n_samples: int = 8  # N: occurrences drawn per word and CEAT samples (seed 000 uses 1000 and 5000; at least 2: random effects need several samples)
sample_sets: list = ["fixed", "random"]  # fixed: same occurrences at every length; random: redrawn
strict_lengths: bool = False  # draw only sentences with at least L words (more than K for ">K")
max_per_word: int = 10000  # occurrences kept per word while streaming the corpus (reservoir; at least 1)
alternative: str = "two-sided"  # p-value of CES: two-sided, greater or less (two-sided: seed 000; greater: Guo & Caliskan code)
alpha: float = 0.005  # significance level marked in the tables (seed 000; in (0, 1))
layer: int = -1  # hidden layer (-1 last)
pooling: str = "mean"  # word vector over its pieces: mean, first or last
seed: int = 0  # seed of corpora and sample sets (at least 0)
cache: bool = False  # read/store vectors in the embedding cache
output_dir: str = "results/ceat/interactive"  # run records (relative to the project root)
table_file: str = ""  # where to write the tables (e.g. paper/tables/ceat_minilm-l6.md)

# %%
import torch
from polybias import models
from polybias.data import text, wordlists
from polybias.planted import probes
from polybias.planted import static as planted_static
from polybias.results import report
from polybias.studies import ceat
from polybias.studies.parameters import check_parameters

check_parameters("03_ceat", batch_tokens=batch_tokens, planted_p=planted_p, n_sentences=n_sentences,
                 n_words=n_words, n_samples=n_samples, max_per_word=max_per_word,
                 alternative=alternative, alpha=alpha, layer=layer, pooling=pooling, seed=seed,
                 model=model, language=language, language_override=language_override,
                 lengths=lengths, sample_sets=sample_sets, corpus=corpus)
_ = torch.manual_seed(seed)

# %% [markdown]
# ## Occurrences
#
# Generated corpora (or the given one) are streamed sentence by sentence; every
# occurrence of a list word (with its own suffix group where the list has one) is kept
# as its sentence and the character span of the word. The table gives the number of
# sentences and the fewest occurrences of any word; a word with fewer than N
# occurrences is sampled with replacement.

# %%
corpora = None  # planted-static: the generated corpora its contextual encoder is built over
if corpus:
    chosen = [wordlists.get_test(language, t, wordlist_file) for t in tests] if tests else \
        list(wordlists.load_tests(language, wordlist_file).values())
    sets = [s for t in chosen for s in t.sets().values()]
    extraction = text.find_occurrences(corpus, sets, language,
                                       max_per_word=max_per_word, seed=seed)
    runs = {"corpus": (chosen, extraction)}
elif model == planted_static.NAME:  # the language's own lists in generated sentences, one corpus per p
    corpora = planted_static.list_corpora(language, wordlist_file, tuple(planted_p), n_sentences, seed)
    runs = {label: (tests_, text.find_occurrences(sentences, [s for t in tests_ for s in t.sets().values()],
                                                  language, max_per_word=max_per_word, seed=seed))
            for label, (tests_, sentences) in corpora.items()}
else:
    runs = probes.planted_extractions(planted_p, n_sentences, n_words, language, seed)
summary = report.markdown_table(ceat.extraction_summary(runs), digits=0)

# %% tags=["nbval-check-output"]
report.show_table(summary)

# %% [markdown]
# ## CES per segment length (seed 000 Tables 2, 5 and 6)
#
# A row per test and sample set (f fixed, r random), a column per segment length; `*`
# marks a CES that is not significant at p < alpha. One run record per test goes to
# `output_dir`.

# %%
planted = models.Planted(language=language, seed=seed, wordlist_file=wordlist_file,
                         contextual=True, corpora=corpora)
encoder = models.load(model, "encoder", revision=revision, device=device, dtype=dtype,
                      batch_tokens=batch_tokens, planted=planted)
frame = ceat.run_segment_study(
    encoder, runs, language, output_dir,
    parameters={"n_sentences": n_sentences, "n_words": n_words, "planted_p": planted_p,
                "corpus_path": corpus, "wordlist_file": wordlist_file, "max_per_word": max_per_word},
    lengths=lengths, n_samples=n_samples, seed=seed, sample_sets=sample_sets,
    alternative=alternative, layer=layer, pooling=pooling, strict_lengths=strict_lengths,
    cache=cache)
ces_table = ceat.ces_table(frame, alpha=alpha)

# %% tags=["nbval-check-output"]
report.show_table(ces_table)

# %% [markdown]
# The same runs in full: standard error, p-value, between-sample variance τ² and the mean
# number of words in the segments.

# %%
detail = report.markdown_table(frame.drop(columns=["corpus", "dropped"]), digits=3,
                               formats={"pvalue": ".1e", "tau2": ".2e", "mean_words": ".1f"})

# %% tags=["nbval-check-output"]
report.show_table(detail)

# %% [markdown]
# ## The planted direction
#
# With the generated corpora the answer is known: at every segment length and for both
# sample sets, CES must increase with the planted strength p. The check below prints
# the CES of the planted strengths in increasing order of p, and whether they increase.
# With `model: planted-static` the association sits in the vectors themselves (and the
# corpus p moves only the context), so the check is that every CES is positive and
# significant.

# %%
direction = ""
if model == planted_static.NAME:  # the lists' own tests: every CES planted positive
    direction = ceat.all_positive_sentence(frame, alpha)
elif not corpus and len(planted_p) > 1:
    direction = report.markdown_table(ceat.ces_by_strength(frame, planted_p), digits=3)

# %% tags=["nbval-check-output"]
report.show_table(direction)

# %% [markdown]
# ## CES against segment length (seed 000 Fig. 1)
#
# Filled markers are significant at p < alpha. In the generated corpora the association
# sits next to the target word, so longer segments dilute it; seed 000 reports CES
# settling after about 20–25 words on natural text.

# %%
if table_file:
    report.write_table("\n\n".join(t for t in (summary, ces_table, detail, direction) if t), table_file)
fig = ceat.plot_segment_study(frame, f"CEAT by segment length, {model}",
                              file=f"ceat_{model}.png" if language == "en" else f"ceat_{model}_{language}.png",
                              alpha=alpha)
