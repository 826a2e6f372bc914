console.log("facilitator CLI: not built yet");
