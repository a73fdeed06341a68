package mlperf

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// MLPerf Training: the time to train is the samples the reference needs
// to reach the quality target at the chosen global batch (its Reference
// Convergence Point, RCP), divided by the simulated throughput, plus the
// evaluations on the way. The RCPs are olympic means (rcp_checker.py drops the fastest and the slowest run) over 10 to 88 runs of the
// reference and they grow with the global batch; a real run converges in
// a number of epochs that varies from run to run (MLPerf scores the mean
// of 5 to 10 runs, dropping the fastest and slowest), so a time to train
// is an expectation, not a promise.

// An RCP is a reference convergence point: at global batch BS, the
// reference converges after Mean samples on average (epochs × the
// training set for an epoch-counted benchmark).
type RCP struct {
	BS   int
	Mean float64
}

// A TrainingBenchmark is one MLPerf Training benchmark.
type TrainingBenchmark struct {
	Name, Round, Task, Dataset string
	Model                      string // catalog model; empty when Lacks says why
	Seq                        int    // sequence length of a transformer's samples
	TrainSamples               int    // samples of one epoch
	EvalSamples                int    // samples of one evaluation
	// RCPs in samples, by ascending batch, and their source.
	RCPs      []RCP
	RCPSource string
	// EvalEvery returns the training samples between evaluations at a
	// global batch; EvalSource says where the rule comes from.
	EvalEvery  func(gbs int) float64
	EvalSource string
	// DefaultBatch is the global batch used when none is given: an RCP
	// point.
	DefaultBatch int
	// EvalOffClock says the evaluations run after the clock stops (on
	// saved checkpoints): they take no time to train.
	EvalOffClock bool
	// EvalSkip, where set, returns the evaluations a run may skip at its
	// start.
	EvalSkip func(gbs int) int
	// EvalLacks, where set, says what perfsim lacks to price the
	// evaluations: they are counted but take no time.
	EvalLacks string
	// TP, MicroBatch and Precision, where TP is set, are the layout of a
	// benchmark run with tensor parallelism (with sequence parallelism
	// and TP communication overlap), as LayoutSource's submission runs
	// it; LoRA, where set, trains low-rank adapters on frozen weights.
	TP, MicroBatch int
	Precision      model.DType
	LayoutSource   string
	// PP and VirtualStages, where PP is set, pipeline the layers over PP
	// stages (interleaved in VirtualStages model chunks a device), ZeRO
	// is what the data-parallel replicas shard (1: the optimizer state,
	// as a distributed optimizer does), and SubmissionGPUs the system
	// size the layout was submitted at: a model that does not fit one
	// node runs on --gpus devices, a multiple of TP·PP.
	PP, VirtualStages, ZeRO int
	SubmissionGPUs          int
	// CP, where set, splits each sequence over CP devices (context
	// parallelism: ring attention over sequence shards).
	CP int
	// LayerSlots counts the embedding and the loss as a layer's slot
	// each when the layers spread over the pipeline's chunks (sim's
	// EmbeddingSlot and LossSlot, Megatron-LM's
	// --account-for-embedding-in-pipeline-split and
	// --account-for-loss-in-pipeline-split).
	LayerSlots bool
	LoRA       *LoRA
	// TableParams, where set, are the parameters of a recommender's
	// embedding tables, sharded over the devices (model parallel) while
	// the rest trains data parallel.
	TableParams float64
	Lacks       string
	// Note qualifies every result of the benchmark.
	Note string
}

// openImagesTrain and openImagesVal are the MLPerf subset of OpenImages
// v6 (264 classes): mlcommons/training single_stage_detector/README.md,
// "The MLPerf Subset" (1,170,301 training and 24,781 validation images).
const openImagesTrain, openImagesVal = 1170301, 24781

func oiEpochs(bs int, e float64) RCP { return RCP{BS: bs, Mean: e * openImagesTrain} }

// criteoTrain and criteoEval are the Criteo 1TB click logs' training
// samples (days 0 to 22) and evaluation samples of MLPerf's DLRM-DCNv2
// (train_samples and eval_samples in NVIDIA's MLPerf Training v4.0
// logs; the training count also in training_rules.adoc).
const criteoTrain, criteoEval = 4195197692, 89137319

func criteoEpochs(bs int, e float64) RCP { return RCP{BS: bs, Mean: e * criteoTrain} }

// kits19Train and kits19Val are the KiTS19 cases of MLPerf's 3D U-Net:
// 168 training and 42 validation cases (train_samples and eval_samples
// in NVIDIA's MLPerf Training v4.0 logs; mlcommons/training
// image_segmentation/pytorch README.md). A training sample is one 128³
// random crop of a case, so an epoch is 168 crops.
const kits19Train, kits19Val = 168, 42

// unet3dEpoch is the samples of one U-Net3D epoch at global batch gbs, the
// last batch padded: CEILING(168/GBS)·GBS (training_rules.adoc).
func unet3dEpoch(gbs int) float64 {
	return math.Ceil(kits19Train/float64(gbs)) * float64(gbs)
}

// unet3dEvalEvery is CEILING(20·168/samples_per_epoch) epochs in samples.
func unet3dEvalEvery(gbs int) float64 {
	spe := unet3dEpoch(gbs)
	return math.Ceil(20*kits19Train/spe) * spe
}

// unet3dEvalSkip is the evaluation slots before the first evaluation, at
// CEILING(1000·168/samples_per_epoch) epochs: 49 at GBS 56 (the first at
// epoch 1000, the 50th slot of 20 epochs).
func unet3dEvalSkip(gbs int) int {
	spe := unet3dEpoch(gbs)
	start := math.Ceil(1000 * kits19Train / spe)
	every := math.Ceil(20 * kits19Train / spe)
	return int(math.Ceil(start/every)) - 1
}

// imagenetTrain and imagenetVal are ImageNet 2012's training and
// validation images (ILSVRC 2012: 1,281,167 and 50,000).
const imagenetTrain, imagenetVal = 1281167, 50000

// TrainingSuite returns the MLPerf Training benchmarks: ResNet-50 (last
// run in v4.0) and BERT-large (v5.0) with their RCPs; the others say
// what perfsim lacks.
func TrainingSuite() []TrainingBenchmark {
	epochs := func(bs int, e float64) RCP { return RCP{BS: bs, Mean: e * imagenetTrain} }
	return []TrainingBenchmark{
		{Name: "resnet", Round: "v4.0", Task: "image classification", Dataset: "ImageNet 2012 (75.9% top-1)",
			Model: "resnet50", TrainSamples: imagenetTrain, EvalSamples: imagenetVal, DefaultBatch: 3264,
			// Olympic means of "Epochs to converge" per batch (10 to 28
			// runs each, less the fastest and slowest), e.g. BS 3264:
			// 457 epochs over 13 runs.
			RCPs: []RCP{epochs(1632, 35), epochs(3264, 457.0/13), epochs(4096, 319.0/8), epochs(8192, 335.0/8), epochs(13056, 45.5),
				epochs(32768, 56), epochs(49152, 68), epochs(58880, 80), epochs(65536, 84.5), epochs(67840, 2232.0/26)},
			RCPSource:  "mlcommons/logging mlperf_logging/rcp_checker/training_4.0.0/rcps_resnet.json @0a0a659d (epochs to converge per BS, the olympic mean as rcp_checker.py takes it)",
			EvalEvery:  func(int) float64 { return 4 * imagenetTrain },
			EvalSource: "MLCommons training_rules.adoc, deprecated benchmarks: Resnet-50 v1.5 evaluates every 4 epochs",
		},
		{Name: "bert", Round: "v5.0", Task: "language modelling (masked LM 72.0%)", Dataset: "Wikipedia 2020-01-01, seq 512",
			Model: "bert-large", Seq: 512, TrainSamples: 0, EvalSamples: 10000, DefaultBatch: 448,
			// Olympic means (20 to 23 runs each, less the fastest and
			// slowest), in samples.
			RCPs: []RCP{{256, 45885952.0 / 18}, {448, 50702848.0 / 21}, {1536, 49973008.0 / 18}, {3072, 49760976.0 / 18}, {4096, 51191808.0 / 18},
				{4608, 50365440.0 / 18}, {6144, 59744256.0 / 18}, {6912, 64834560.0 / 18}, {8192, 75350016.0 / 18}, {8704, 76926720.0 / 18},
				{12288, 80371200.0 / 18}, {13056, 83616000.0 / 18}, {16384, 99097600.0 / 18}},
			RCPSource: "mlcommons/logging mlperf_logging/rcp_checker/training_5.0.0/rcps_bert.json @17b4ee5a (samples to converge per BS, the olympic mean as rcp_checker.py takes it)",
			EvalEvery: func(gbs int) float64 {
				return math.Floor(0.05*(230.23*float64(gbs)+3e6)/25000) * 25000
			},
			EvalSource: "MLCommons training_rules.adoc: BERT eval_interval_samples = FLOOR(0.05*(230.23*GBS+3000000), 25000); 10,000 eval samples (mlcommons/training retired_benchmarks/bert/README.md)",
		},
		{Name: "gpt3", Round: "v4.0", Task: "LLM pretraining (log perplexity 2.69)", Dataset: "C4 (en), seq 2048, from the 4000-step checkpoint",
			Model: "gpt3-175b", Seq: 2048, EvalSamples: 5660, DefaultBatch: 2304,
			// Olympic means of six reference runs a batch, in tokens ÷
			// 2048 (the RCPs count tokens), e.g. BS 2048: three runs of
			// 1,157,627,904 tokens and three of 1,207,959,552, less one
			// of each: 1,182,793,728 tokens = 577,536 sequences. BS 6144
			// logs three runs as 1 (placeholders): its three real runs
			// (1,409,286,144 each) are taken.
			RCPs:      []RCP{{1536, 583680}, {2048, 577536}, {3072, 589824}, {4096, 614400}, {6144, 688128}, {8192, 792576}},
			RCPSource: "mlcommons/logging mlperf_logging/rcp_checker/training_4.1.0/rcps_gpt3.json @652244d9 (the same points as training_3.0.0; tokens to converge per BS, the olympic mean as rcp_checker.py takes it, ÷ 2048 tokens a sequence)",
			EvalEvery: func(gbs int) float64 { return math.Ceil(24576/float64(gbs)) * float64(gbs) },
			EvalSource: "MLCommons training_rules.adoc, deprecated benchmarks: GPT3 evaluates every 24576 sequences, CEIL(24576/GBS) steps if GBS does not divide it; " +
				"5,660 evaluation sequences (eval_samples 11,590,004 tokens ÷ 2048 in NVIDIA's MLPerf Training v4.0 logs, results/eos_n64_ngc24.04_nemo/gpt3)",
			TP: 4, PP: 8, VirtualStages: 4, MicroBatch: 2, Precision: model.FP8, ZeRO: 1, SubmissionGPUs: 512,
			LayoutSource: "NVIDIA MLPerf Training v4.0, benchmarks/gpt3/implementations/nemo/config_DGXH100_64x8x128x4x8_mbs2.sh: TP 4, PP 8, " +
				"INTERLEAVED_PIPELINE 4, MICRO_BATCH_SIZE 2, TP comm overlap, fp8 (config_fp8.sh), distributed fused Adam (conf/optim/distributed_fused_adam.yaml); " +
				"64 DGX H100 at global batch 2304 (its logs: global_batch_size 2304, gradient_accumulation_steps 72)",
			Note: "tp 4 + sp, pp 8 × 4 virtual stages, micro-batch 2, fp8, optimizer state sharded over dp, as NVIDIA's v4.0 DGX H100 submission",
		},
		{Name: "llama31_405b", Round: "v5.0", Task: "LLM pretraining (log perplexity 5.6)", Dataset: "C4 (en), seq 8192",
			Model: "llama3.1-405b", Seq: 8192, EvalSamples: 5760, DefaultBatch: 1152,
			// Olympic means of six reference runs a batch, in sequences,
			// e.g. BS 2304: four runs of 368,640 and two of 414,720, less
			// one of each: 380,160.
			RCPs:      []RCP{{1152, 322560}, {2304, 380160}, {4608, 495360}},
			RCPSource: "mlcommons/logging mlperf_logging/rcp_checker/training_5.0.0/rcps_llama31_405b.json @730ea7af (sequences to converge per BS, the olympic mean as rcp_checker.py takes it)",
			EvalEvery: func(gbs int) float64 { return math.Ceil(46080/float64(gbs)) * float64(gbs) },
			EvalSource: "MLCommons training_rules.adoc as of v5.0 (@c92aa38): Llama31_405B evaluates every 46080 sequences, CEIL(46080/GBS) steps if GBS does not divide it; " +
				"5,760 evaluation sequences (five validation steps of 1,152 in NVIDIA's MLPerf Training v5.0 logs, results/eos-dfw_n64_ngc25.01_nemo/llama31_405b)",
			TP: 8, PP: 8, VirtualStages: 8, CP: 2, MicroBatch: 1, Precision: model.FP8, ZeRO: 1, SubmissionGPUs: 512,
			LayoutSource: "NVIDIA MLPerf Training v5.0, benchmarks/llama31_405b/implementations/eos-dfw_n64_ngc25.01_nemo/config_DGXH100_64x8x288xtp8pp8cp2.sh: " +
				"TP 8, PP 8, INTERLEAVED_PIPELINE 8, CONTEXT_PARALLEL 2, MICRO_BATCH_SIZE 1, TP comm overlap, 64 DGX H100 (MINIBS 288: global batch 1152); " +
				"ASYM_PP_EMBED and ASYM_PP_LOSS True, which pretrain.py passes to MegatronStrategy as account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split " +
				"(the embedding and the loss a layer slot each: 126 + 2 = 128 = 8 × 8 × 2); config_common.sh: FP8, USE_DIST_OPTIMIZER",
			LayerSlots: true,
			Note:       "tp 8 + sp, pp 8 × 8 virtual stages with the embedding and the loss as layer slots, cp 2, micro-batch 1, fp8, optimizer state sharded over dp, as NVIDIA's v5.0 DGX H100 submission",
		},
		{Name: "llama2_70b_lora", Round: "v5.0", Task: "LLM fine-tuning (eval loss 0.925)", Dataset: "SCROLLS GovReport, seq 8192",
			Model: "llama2-70b", Seq: 8192, EvalSamples: 173, DefaultBatch: 8,
			// RCP means: rcp_checker's olympic mean (the fastest and the
			// slowest of 20 reference runs dropped), e.g. BS 8: 57,216/18.
			RCPs:      []RCP{{8, 57216.0 / 18}, {16, 72576.0 / 18}, {32, 108672.0 / 18}, {128, 202752.0 / 18}},
			RCPSource: "mlcommons/logging mlperf_logging/rcp_checker/training_5.0.0/rcps_llama2_70b_lora.json @17b4ee5a (samples to converge per BS; the mean as rcp_checker.py's compute_rcp_stats takes it, the fastest and slowest run dropped)",
			EvalEvery: func(gbs int) float64 { return math.Ceil(384/float64(gbs)) * float64(gbs) },
			EvalSkip:  func(gbs int) int { return int(math.Floor(0.125*float64(gbs) + 2)) },
			EvalSource: "MLCommons training_rules.adoc: Llama2_70B_LoRA evaluates every 384 sequences, skipping the first FLOOR(0.125*GBS+2) evaluations; " +
				"173 evaluation sequences (eval_samples in NVIDIA's MLPerf Training v4.0 logs, results/eos_ngc24.04_nemo/llama2_70b_lora)",
			TP: 4, MicroBatch: 1, Precision: model.FP8,
			LayoutSource: "NVIDIA MLPerf Training v4.0, benchmarks/llama2_70b_lora/implementations/nemo/config_DGXH100_1x8x4xtp4pp1cp1.sh: TP 4, SP, TP comm overlap, FP8, MBS 1",
			LoRA: &LoRA{Rank: 16, Dropout: 0.1, Targets: []string{"attn.qkv", "attn.out"},
				Source: "mlcommons/training llama2_70b_lora/README.md: --lora_r 16 --lora_alpha 32 --lora_dropout 0.1 --lora_target_modules qkv_proj,o_proj"},
			Note: "tp 4 + sp, fp8, as NVIDIA's v4.0 DGX H100 submission; LoRA rank 16 on qkv and o_proj, base frozen",
		},
		{Name: "retinanet", Round: "v5.0", Task: "object detection (34.0% mAP)", Dataset: "OpenImages MLPerf subset, 800x800",
			Model: "retinanet", TrainSamples: openImagesTrain, EvalSamples: openImagesVal, DefaultBatch: 256,
			// Olympic means of "Epochs to converge" per batch (10 to 20
			// runs each, less the fastest and slowest), e.g. BS 320:
			// sixteen runs of 4 and two of 5 (74/18).
			RCPs: []RCP{oiEpochs(256, 4), oiEpochs(320, 74.0/18), oiEpochs(512, 5), oiEpochs(768, 5), oiEpochs(1024, 6),
				oiEpochs(1280, 120.0/18), oiEpochs(2048, 142.0/18), oiEpochs(2560, 95.0/11), oiEpochs(4096, 197.0/13)},
			RCPSource:  "mlcommons/logging mlperf_logging/rcp_checker/training_5.0.0/rcps_retinanet.json @e6ba2a93 (epochs to converge per BS, the olympic mean as rcp_checker.py takes it)",
			EvalEvery:  func(int) float64 { return openImagesTrain },
			EvalSource: "mlcommons/training single_stage_detector/README.md: evaluation every epoch over all 24,781 validation images (the MLPerf subset: 1,170,301 training images)",
			Note:       "the reference freezes the stem and first stage and its batch norms; perfsim trains every convolution",
		},
		{Name: "unet3d", Round: "v4.0", Task: "medical image segmentation (mean Dice 0.908)", Dataset: "KiTS19, 168 cases as 128³ random crops",
			Model: "unet3d", TrainSamples: kits19Train, EvalSamples: kits19Val, DefaultBatch: 56,
			// Olympic means of "Epochs to converge", which for unet3d
			// are samples (an epoch is 168), with the 4 fastest and 4
			// slowest runs dropped as rcp_checker.py does for unet3d:
			// e.g. BS 56: 197 runs, the middle 189 sum to 67,549,440.
			RCPs:      []RCP{{28, 31755360.0 / 92}, {56, 67549440.0 / 189}, {64, 32583296.0 / 83}, {84, 37080960.0 / 89}},
			RCPSource: "mlcommons/logging mlperf_logging/rcp_checker/training_4.0.0/rcps_unet3d.json @cd81565 (samples to converge per BS, the olympic mean as rcp_checker.py takes it for unet3d: 4 runs dropped at each end; no later round has unet3d RCPs)",
			EvalEvery: unet3dEvalEvery,
			EvalSkip:  unet3dEvalSkip,
			EvalSource: "MLCommons training_rules.adoc (v4.0, training_policies @54d70443): U-Net3D evaluates starting at CEILING(1000*168/samples_per_epoch) epochs, then every CEILING(20*168/samples_per_epoch), " +
				"samples_per_epoch = CEILING(168/GBS)*GBS; the evaluation slides 128³ windows at overlap 0.5 over the 42 validation cases (eval_samples 42, validation_overlap 0.5 in NVIDIA's v4.0 logs)",
			EvalLacks: "the sliding-window evaluation (42 KiTS19 cases at overlap 0.5: the cases' preprocessed shapes, so their window counts, are not published)",
			Note:      "evaluations counted, not priced: the cases' window counts are not published",
		},
		{Name: "stable_diffusion", Round: "v5.0", Task: "text to image (FID ≤ 90, CLIP ≥ 0.15)", Dataset: "LAION-400M subset, 512x512 as 64x64 latents",
			Model: "sd2-unet", DefaultBatch: 512, MicroBatch: 32, EvalOffClock: true,
			// Olympic means, e.g. BS 512: thirteen runs of 2,560,000 and
			// one of 3,072,000, less the fastest and slowest.
			RCPs:       []RCP{{256, 2048000}, {384, 33296640.0 / 13}, {512, 2560000}, {1024, 31232000.0 / 11}, {2048, 44032000.0 / 11}},
			RCPSource:  "mlcommons/logging mlperf_logging/rcp_checker/training_5.0.0/rcps_stable_diffusion.json @17b4ee5a (samples to converge per BS, the olympic mean as rcp_checker.py takes it)",
			EvalEvery:  func(gbs int) float64 { return math.Ceil(512000/float64(gbs)) * float64(gbs) },
			EvalSource: "MLCommons training_rules.adoc, Stable Diffusion: a checkpoint every 512,000 images, evaluated offline (FID and CLIP over 30,000 COCO captions), the time not counted",
			Note:       "the UNet only: the frozen OpenCLIP ViT-H text encoder not priced (NVIDIA's submission encodes captions offline); micro-batch 32, as 64 a GPU does not fit perfsim's layer-list memory",
		},
		{Name: "dlrm_dcnv2", Round: "v5.0", Task: "recommendation (AUC 0.80275)", Dataset: "Criteo 1TB click logs, synthetic multi-hot",
			Model: "dlrm-dcnv2", TrainSamples: criteoTrain, EvalSamples: criteoEval, DefaultBatch: 55296,
			TableParams: 26135627264, Precision: model.FP16,
			// Olympic means of "Epochs to converge" (28 to 86 runs
			// each, less the fastest and slowest), e.g. BS 55296:
			// 36.55/48 epochs.
			RCPs: []RCP{criteoEpochs(32768, 19.8/28), criteoEpochs(55296, 36.55/48), criteoEpochs(65536, 22.15/28),
				criteoEpochs(102400, 42.75/48), criteoEpochs(135168, 79.8/86)},
			RCPSource: "mlcommons/logging mlperf_logging/rcp_checker/training_5.0.0/rcps_dlrm_dcnv2.json @17b4ee5a (epochs to converge per BS, the olympic mean as rcp_checker.py takes it; 4,195,197,692 training samples)",
			EvalEvery: func(gbs int) float64 {
				return math.Floor(criteoTrain/(float64(gbs)*20)) * float64(gbs)
			},
			EvalSource: "MLCommons training_rules.adoc: DLRMv2 evaluates every FLOOR(4195197692/(GBS*20)) steps' samples; 89,137,319 eval samples (eval_samples in NVIDIA's MLPerf Training v4.0 logs)",
			Note:       "tables sharded evenly over the devices (fp32, Adagrad), MLPs data parallel in fp16, the two overlapped by resource as HugeCTR runs them",
		},
		{Name: "rgat", Round: "v5.0", Task: "node classification", Dataset: "IGBH-Full", Lacks: "a graph neural network (neighbour sampling over IGBH-Full: the sampled subgraph per seed node is not published)"},
	}
}

// FindTraining returns the training benchmark named name, or an error
// that lists the known ones.
func FindTraining(name string) (TrainingBenchmark, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	var names []string
	for _, b := range TrainingSuite() {
		if b.Name == n || strings.ReplaceAll(b.Name, "_", "-") == n {
			return b, nil
		}
		names = append(names, b.Name)
	}
	return TrainingBenchmark{}, fmt.Errorf("unknown training benchmark %q (want one of %s)", name, strings.Join(names, ", "))
}

// Converge returns the samples to converge at global batch gbs,
// interpolated linearly between the RCPs around it (as MLPerf's RCP
// checker interpolates), and whether gbs lies within the RCPs' range
// (outside it, the nearest RCP, and MLPerf would ask for a new one).
func (b *TrainingBenchmark) Converge(gbs int) (float64, bool) {
	r := b.RCPs
	if gbs <= r[0].BS {
		return r[0].Mean, gbs == r[0].BS
	}
	for i := 1; i < len(r); i++ {
		if gbs <= r[i].BS {
			f := float64(gbs-r[i-1].BS) / float64(r[i].BS-r[i-1].BS)
			return r[i-1].Mean + f*(r[i].Mean-r[i-1].Mean), true
		}
	}
	return r[len(r)-1].Mean, false
}

// A TrainingResult is a benchmark's time to train on a system.
type TrainingResult struct {
	Benchmark   TrainingBenchmark
	GlobalBatch int
	// Samples to converge (the RCP, interpolated), steps and evaluations.
	Samples float64
	Steps   int
	Evals   int
	InRange bool
	// StepTime and Throughput (samples/s) of training; EvalTime the
	// evaluations' total; Total the time to train.
	StepTime, EvalTime, Total model.Seconds
	Throughput                float64
	// Memory and Usable are one device's footprint and usable memory
	// (set for layout benchmarks).
	Memory, Usable model.Bytes
	Note           string
}

// TimeToTrain prices benchmark b at global batch gbs on sys: data
// parallel over every device (gbs split evenly), mixed precision (bf16,
// or fp16 where the device has no bf16), kernels launched from captured
// graphs, with the evaluations priced as inference at the per-device
// batch.
func TimeToTrain(sys *hardware.System, b TrainingBenchmark, gbs int, resolve Resolver) TrainingResult {
	res := TrainingResult{Benchmark: b, GlobalBatch: gbs}
	if b.Lacks != "" {
		res.Note = "perfsim lacks " + b.Lacks
		return res
	}
	if b.TP > 0 || b.TableParams > 0 {
		if b.TableParams > 0 {
			timeToTrainSharded(sys, b, gbs, resolve, &res)
		} else {
			timeToTrainLayout(sys, b, gbs, resolve, &res)
		}
		if res.Total > 0 {
			res.Note = rangeNote(&b, res.InRange, gbs, res.Note)
		}
		return res
	}
	devs := sys.Devices()
	if gbs <= 0 || gbs%devs != 0 {
		res.Note = fmt.Sprintf("the global batch %d does not split over %d devices", gbs, devs)
		return res
	}
	mb := gbs / devs
	if b.MicroBatch > 0 && mb > b.MicroBatch {
		if mb%b.MicroBatch != 0 {
			res.Note = fmt.Sprintf("the global batch %d does not split into micro-batches of %d over %d devices", gbs, b.MicroBatch, devs)
			return res
		}
		mb = b.MicroBatch
	}
	w, err := resolve(b.Model)
	if err != nil {
		res.Note = err.Error()
		return res
	}
	act := model.BF16
	if p := sys.Device.Processor(); !hasPeak(&p, model.BF16) {
		act = model.FP16
	}
	sc := sim.Default()
	sc.Mode, sc.Batch, sc.DP, sc.GlobalBatch = sim.Training, mb, devs, gbs
	sc.Weights, sc.Act, sc.KV = act, act, act
	if b.Seq > 0 {
		sc.Seq = b.Seq
	}
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		res.Note = err.Error()
		return res
	}
	if !rep.Memory.Fits {
		res.Note = fmt.Sprintf("a micro-batch of %d does not fit in one device's memory", mb)
		return res
	}
	res.StepTime = rep.Training.StepTime
	res.Throughput = rep.Training.SamplesPerSecond
	res.converge(&b, gbs)
	if b.EvalOffClock || b.EvalLacks != "" {
		if b.EvalOffClock {
			res.Evals = 0
		}
		res.Total = res.StepTime * model.Seconds(res.Steps)
		res.Note = rangeNote(&b, res.InRange, gbs, b.Note)
		return res
	}
	// Evaluation: inference at the per-device batch over the eval set.
	isc := sim.Default()
	isc.Batch = gbs / devs
	isc.Weights, isc.Act, isc.KV = act, act, act
	if b.Seq > 0 {
		isc.Input, isc.Output = b.Seq, 1
	}
	one, err := hardware.NewSystem(sys.Device, 1, 1)
	if err != nil {
		res.Note = err.Error()
		return res
	}
	irep, err := sim.Run(one, w, isc)
	if err != nil {
		res.Note = err.Error()
		return res
	}
	perEval := model.Seconds(float64(irep.Inference.TTFT) * math.Ceil(float64(b.EvalSamples)/float64(gbs)))
	res.EvalTime = perEval * model.Seconds(res.Evals)
	res.Total = res.StepTime*model.Seconds(res.Steps) + res.EvalTime
	res.Note = rangeNote(&b, res.InRange, gbs, b.Note)
	return res
}

// converge sets res's samples to converge at global batch gbs (and
// whether gbs lies within the benchmark's RCPs), the steps they take and
// the evaluations the rules run on the way, less those they skip.
func (res *TrainingResult) converge(b *TrainingBenchmark, gbs int) {
	res.Samples, res.InRange = b.Converge(gbs)
	res.Steps = int(math.Ceil(res.Samples / float64(gbs)))
	res.Evals = int(math.Ceil(res.Samples / b.EvalEvery(gbs)))
	if b.EvalSkip != nil {
		res.Evals = max(0, res.Evals-b.EvalSkip(gbs))
	}
}

// rangeNote adds to note that gbs lies outside the RCPs when it does.
func rangeNote(b *TrainingBenchmark, inRange bool, gbs int, note string) string {
	if inRange {
		return note
	}
	if note != "" {
		note += "; "
	}
	return note + fmt.Sprintf("global batch %d is outside the RCPs (%d to %d): the nearest RCP is used", gbs, b.RCPs[0].BS, b.RCPs[len(b.RCPs)-1].BS)
}

// hasPeak reports whether p has a peak of its own for d.
func hasPeak(p *model.Processor, d model.DType) bool {
	_, ok := p.Peak(d)
	return ok
}
